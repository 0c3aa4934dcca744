/**
 * The built binary in a real terminal (tmux): a prompt whose shell tool sleeps,
 * the process killed with SIGKILL mid-tool, `mend --continue` shows the INFO
 * item, `/continue` gets the model's answer, and the killed command never runs
 * again (a marker file counts its runs). tmux is on the machines (.ci/run checks).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanupSandboxes, makeSandbox, readLog, sessionFiles, waitFor, writeScript, type Sandbox } from '../../support/cli.js';

const SOCKET = `mend-tui-e2e-${process.pid}`;

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
}

/**
 * Starts mend as the pane's own process (exec: the pane pid is mend's pid), with a clean environment.
 * `hold`: a shell waits after mend and prints its exit status (tmux may drop the last output of a pane whose process exits at once).
 */
function startMend(sb: Sandbox, name: string, args: string[], hold = false): number {
  const env = [
    `PATH=${process.env['PATH'] ?? '/usr/bin:/bin'}`,
    `HOME=${sb.root}`,
    `MEND_HOME=${sb.home}`,
    'LANG=C.UTF-8',
    'TERM=xterm-256color',
    'NO_COLOR=1',
  ];
  const quoted = ['node', BIN, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  const run = `env -i ${env.join(' ')} ${quoted} 2>>'${join(sb.scratch, 'stderr')}'`;
  tmux('new-session', '-d', '-s', name, '-x', '80', '-y', '50', '-c', sb.cwd, hold ? `${run}; echo "[exit $?]"; sleep 60` : `exec ${run}`);
  // A pane whose process died stays readable (and a crash's stderr is kept in scratch/stderr).
  tmux('set-option', '-t', name, 'remain-on-exit', 'on');
  return Number(tmux('display-message', '-p', '-t', name, '#{pane_pid}').trim());
}

function screen(name: string): string {
  // -J joins lines the terminal wrapped.
  return tmux('capture-pane', '-p', '-J', '-t', name);
}

/** Waits for text on the screen; whitespace is compared collapsed, as Ink wraps long lines itself. */
async function waitForScreen(name: string, text: string, timeoutMs = 15_000): Promise<string> {
  const flat = (t: string) => t.replace(/\s+/g, ' ');
  let last = '';
  try {
    await waitFor(() => flat((last = screen(name))).includes(flat(text)), timeoutMs, `"${text}" on the screen`);
  } catch (error) {
    throw new Error(`${String(error)}\n--- last screen:\n${last}`);
  }
  return last;
}

/**
 * "dead" once the pane's process has ended (its terminal closed; a pid check could see a zombie).
 * No exit status: tmux 3.3 sometimes leaves the process unreaped, so a status comes from a holding shell (`hold`).
 */
function paneState(name: string): string {
  return tmux('display-message', '-p', '-t', name, '#{pane_dead}').trim() === '1' ? 'dead' : 'alive';
}

afterAll(() => {
  try {
    const socket = tmux('display-message', '-p', '#{socket_path}').trim();
    tmux('kill-server');
    rmSync(socket, { force: true });
  } catch {
    // no server left
  }
  cleanupSandboxes();
});

describe('terminal UI end to end (tmux)', () => {
  it('on a terminal, -p stays headless: the answer is printed and mend exits', { timeout: 30_000 }, async () => {
    const sb = makeSandbox('tui-e2e');
    const script = writeScript(sb, [{ text: 'a plain headless answer' }]);
    startMend(sb, 'headless', ['-p', 'hi', '--scripted-responses', script], true);
    const out = await waitForScreen('headless', '[exit 0]');
    expect(out).toContain('a plain headless answer');
    expect(out).not.toContain('tokens');
  });

  it('SIGKILL mid-tool, `mend --continue` shows INFO, /continue answers, the tool does not run again', { timeout: 60_000 }, async () => {
    const sb = makeSandbox('tui-e2e');
    const marker = join(sb.scratch, 'marker');
    const script = writeScript(sb, [
      {
        text: 'Running the slow command.',
        toolCalls: [{ id: 'call_slow', name: 'run_shell_command', args: { command: `echo ran >> '${marker}'; sleep 20` } }],
      },
      { text: 'The slow command was interrupted; its outcome is unknown, so I did not run it again. All done.' },
    ]);

    const first = startMend(sb, 'first', ['-i', 'run the slow command', '--approval-mode', 'yolo', '--scripted-responses', script]);
    await waitFor(() => existsSync(marker), 15_000, 'the tool to start');
    await waitForScreen('first', '[running]');
    process.kill(first, 'SIGKILL');
    await waitFor(() => paneState('first') === 'dead', 5000, 'mend to die');
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');

    // Held by a shell: it prints mend's exit status (tmux 3.3 can leave an exec'd pane's process unreaped, its status unknown).
    startMend(sb, 'second', ['--continue', '--scripted-responses', script], true);
    const notice = await waitForScreen('second', 'INFO  interrupted_turn');
    expect(notice).toContain('cause crash');
    expect(notice).toContain('[outcome unknown]');
    expect(notice).toContain('/continue would send 1 part');
    expect(notice).toContain('→ /continue');

    tmux('send-keys', '-t', 'second', '-l', '/continue');
    await waitForScreen('second', '> /continue');
    tmux('send-keys', '-t', 'second', 'Enter');
    const answered = await waitForScreen('second', 'so I did not run it again. All done.');
    expect(answered).toContain('closed the interrupted turn with 1 tool result');
    // The killed command did not run again; the log holds the one synthetic result the continuation wrote.
    expect(readFileSync(marker, 'utf8')).toBe('ran\n');
    const [log] = sessionFiles(sb);
    // The answer streams to the screen before its record is written.
    await waitFor(() => readLog(log!).at(-1)?.type === 'assistant', 5000, 'the answer to be recorded');
    expect(readLog(log!).filter((r) => r.type === 'tool_result')).toHaveLength(1);

    tmux('send-keys', '-t', 'second', '-l', '/quit');
    tmux('send-keys', '-t', 'second', 'Enter');
    try {
      await waitForScreen('second', '[exit 0]', 10_000);
    } catch (error) {
      throw new Error(`${String(error)}\n--- stderr:\n${readFileSync(join(sb.scratch, 'stderr'), 'utf8')}`);
    }
  });
});
