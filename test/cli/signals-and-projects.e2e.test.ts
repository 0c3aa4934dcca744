/**
 * Signals, pipes and projects and honest logs, through the built CLI.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { query } from '../../src/sdk/index.js';
import {
  BIN,
  baseEnv,
  cleanupSandboxes,
  killMarkedGroups,
  logPathOf,
  makeSandbox,
  markerLines,
  mend,
  readLog,
  sessionFiles,
  singleResult,
  spawnMend,
  transcript,
  waitFor,
  watchStdout,
  writeScript,
} from '../support/cli.js';
import { CORPUS_DIR } from '../support/corpus.js';

afterAll(cleanupSandboxes);

const DANGLING = '38dff1b0-3406-4c0b-a5f4-8df5d96853fc';
const user = (text: string) => JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: text }, parent_tool_use_id: null });

describe('signals and pipes', () => {
  it('SIGHUP kills the running tool group, records the abort as sighup and exits 129', async () => {
    const sb = makeSandbox('hup');
    const marker = join(sb.scratch, 'ran');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: `echo $$ >> '${marker}'; sleep 30` } }] }]);
    const run = spawnMend(sb, ['-p', 'go', '--approval-mode', 'yolo', '--scripted-responses', script, '-o', 'stream-json']);
    try {
      await waitFor(() => markerLines(marker).length === 1, 15_000, 'the tool');
      run.kill('SIGHUP');
      const done = await run;
      expect(done.exitCode).toBe(129);
      const pgid = Number(markerLines(marker)[0]);
      await waitFor(
        () => {
          try {
            process.kill(-pgid, 0);
            return false;
          } catch {
            return true;
          }
        },
        5000,
        'the tool group to die',
      );
      const [log] = sessionFiles(sb);
      expect(readLog(log!).at(-1)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'sighup' } });
    } finally {
      killMarkedGroups(marker);
    }
  });

  it('a closed stdout (| head -1) ends quietly with 141 and records the abort', async () => {
    const sb = makeSandbox('epipe');
    const script = writeScript(sb, [{ text: 'x'.repeat(200), chunkSize: 1, delayMs: 5 }]);
    const r = await execa(
      'bash',
      ['-c', `node ${BIN} -p go --scripted-responses ${script} -o stream-json --include-partial-messages | head -1; echo "exit=\${PIPESTATUS[0]}" >&2`],
      { cwd: sb.cwd, env: baseEnv(sb), extendEnv: false, reject: false },
    );
    expect(r.stderr).toContain('exit=141');
    expect(r.stderr).not.toContain('Error');
    const [log] = sessionFiles(sb);
    expect(readLog(log!).at(-1)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'stdout_closed' } });
    const list = await execa('bash', ['-c', `node ${BIN} sessions list | head -0; echo "exit=\${PIPESTATUS[0]}" >&2`], {
      cwd: sb.cwd,
      env: baseEnv(sb),
      extendEnv: false,
      reject: false,
    });
    expect(list.stderr).not.toContain('EPIPE');
  });

  it('text mode prints the final answer; every step with --verbose', async () => {
    const sb = makeSandbox('text');
    const steps = [{ text: 'Step one.', toolCalls: [{ id: 'r1', name: 'list_directory', args: { path: '.' } }] }, { text: 'Final answer.' }];
    const plain = await mend(sb, ['-p', 'go', '--scripted-responses', writeScript(sb, steps)]);
    expect(plain.stdout).toBe('Final answer.\n');
    const verbose = await mend(sb, ['-p', 'go', '--verbose', '--scripted-responses', writeScript(sb, steps)]);
    expect(verbose.stdout).toBe('Step one.\nFinal answer.\n');
    const escapes = await mend(sb, ['-p', 'go', '--scripted-responses', writeScript(sb, [{ text: 'red \u001b[31mtext\u001b[0m \u001b]0;title\u0007done' }])]);
    expect(escapes.stdout).toBe('red text done\n');
  });
});

describe('sessions and projects', () => {
  it('one unreadable session does not hide the others; --continue names an unreadable newest one', async () => {
    const sb = makeSandbox('unreadable');
    mkdirSync(sb.chats, { recursive: true });
    copyFileSync(join(CORPUS_DIR, 'dangling-single-call', 'session.jsonl'), logPathOf(sb, DANGLING));
    const broken = 'aaaaaaaa-0000-4000-8000-000000000001';
    mkdirSync(logPathOf(sb, broken));
    const list = await mend(sb, ['sessions', 'list', '--json']);
    expect(list.exitCode).toBe(0);
    const rows = JSON.parse(list.stdout) as Array<{ id: string; kind: string; error?: { code: string } }>;
    expect(rows.find((r) => r.id === DANGLING)?.kind).toBe('interrupted_turn');
    expect(rows.find((r) => r.error)).toMatchObject({ error: { code: 'session_read_failed' } });
    const cont = await mend(sb, ['--continue', '-o', 'stream-json']);
    expect(cont.exitCode).toBe(3);
    expect(singleResult(cont.stdout).error?.message).toContain(broken);
  });

  it('two roots that share a folder name never resume each other', async () => {
    const sb = makeSandbox('collide');
    const a = join(sb.root, 'x', 'a-b');
    const b = join(sb.root, 'x', 'a', 'b');
    mkdirSync(a, { recursive: true });
    mkdirSync(b, { recursive: true });
    const script = writeScript(sb, [{ text: 'hello from a-b' }]);
    const inA = await mend(sb, ['-p', 'in a-b', '--scripted-responses', script, '-o', 'stream-json'], { cwd: a });
    const id = transcript(inA.stdout).init.session_id;
    const fromB = await mend(sb, ['--continue', '-o', 'stream-json'], { cwd: b });
    expect(fromB.exitCode).toBe(3);
    expect(singleResult(fromB.stdout).error?.code).toBe('no_session_to_continue');
    const byId = await mend(sb, ['--resume', id, '-o', 'stream-json'], { cwd: b });
    expect(singleResult(byId.stdout).error?.message).toContain('belongs to');
    expect(JSON.parse((await mend(sb, ['sessions', 'list', '--json'], { cwd: b })).stdout)).toEqual([]);
    const fromA = await mend(sb, ['--continue', '-o', 'stream-json'], { cwd: a });
    expect(transcript(fromA.stdout).init.session_id).toBe(id);
  });

  it('--resume PATH from another directory warns on the recovery line and in the notice', async () => {
    const sb = makeSandbox('elsewhere');
    const path = join(sb.scratch, 'copied.jsonl');
    copyFileSync(join(CORPUS_DIR, 'dangling-single-call', 'session.jsonl'), path);
    const t = transcript((await mend(sb, ['--resume', path, '-o', 'stream-json'])).stdout);
    expect(t.recovery).toMatchObject({ project_warning: expect.stringContaining('/home/dev/projects/webshop') });
    expect(t.recovery!.visible_notice).toContain('it now runs in');
  });

  it('a FIFO at a session path is reported, never read', async () => {
    const sb = makeSandbox('fifo');
    mkdirSync(sb.chats, { recursive: true });
    execFileSync('mkfifo', [logPathOf(sb, DANGLING)]);
    const r = await mend(sb, ['--resume', DANGLING, '-o', 'stream-json'], { timeout: 10_000 });
    expect(r.timedOut).toBe(false);
    expect(singleResult(r.stdout).error).toMatchObject({ code: 'session_read_failed', message: expect.stringContaining('FIFO') });
  });

  it('a symlinked log is never appended through: the real file is resumed and locked', async () => {
    const sb = makeSandbox('symlink');
    mkdirSync(sb.chats, { recursive: true });
    const real = join(sb.scratch, `${DANGLING}.jsonl`);
    copyFileSync(join(CORPUS_DIR, 'clean-model-text-tail', 'session.jsonl'), real);
    const link = join(sb.scratch, 'link.jsonl');
    symlinkSync(real, link);
    const holder = spawnMend(sb, ['--resume', real, '--input-format', 'stream-json', '-o', 'stream-json'], { stdin: 'pipe' });
    const watch = watchStdout(holder);
    await watch.waitFor((l) => l.includes('"subtype":"recovery"'));
    const second = await mend(sb, ['--resume', link, '-p', 'x', '--scripted-responses', writeScript(sb, [{ text: 'y' }]), '-o', 'stream-json']);
    expect(singleResult(second.stdout).error?.code).toBe('session_locked');
    holder.stdin!.end();
    await holder;
    expect(readdirSync(sb.scratch).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });
});

describe('honest logs', () => {
  it("a host's substituted input is recorded as what ran", async () => {
    const sb = makeSandbox('updated');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: 'echo harmless' } }] }, { text: 'ok' }]);
    const q = query({
      prompt: 'go',
      options: {
        cwd: sb.cwd,
        env: { MEND_HOME: sb.home },
        scriptedResponses: script,
        canUseTool: async () => ({ behavior: 'allow', updatedInput: { command: 'echo substituted' } }),
      },
    });
    for await (const m of q) if (m.type === 'result') break;
    await q.close();
    const [log] = sessionFiles(sb);
    const result = readLog(log!).find((r) => r.type === 'tool_result') as { toolCallResult: Record<string, unknown> };
    expect(result.toolCallResult).toMatchObject({ executedArgs: { command: 'echo substituted' }, argsChangedByHost: true });
  });

  it('before initialize a host may only make the mode stricter; every change is recorded', async () => {
    const sb = makeSandbox('modes');
    const control = (id: string, request: Record<string, unknown>) => JSON.stringify({ type: 'control_request', request_id: id, request });
    const r = await mend(
      sb,
      ['--approval-mode', 'plan', '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', writeScript(sb, [{ text: 'ok' }])],
      {
        input:
          [
            control('a', { subtype: 'set_permission_mode', mode: 'yolo' }),
            control('b', { subtype: 'initialize' }),
            control('c', { subtype: 'set_permission_mode', mode: 'default' }),
            user('hi'),
          ].join('\n') + '\n',
      },
    );
    const answers = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>)
      .filter((m) => m['type'] === 'control_response')
      .map((m) => [m['response']['request_id'], m['response']['subtype']]);
    expect(answers).toEqual([
      ['a', 'error'],
      ['b', 'success'],
      ['c', 'success'],
    ]);
    const [log] = sessionFiles(sb);
    expect(
      readLog(log!)
        .filter((rec) => rec.type === 'system' && rec.subtype === 'approval_mode_changed')
        .map((rec) => (rec as { systemPayload: unknown }).systemPayload),
    ).toEqual([{ from: 'plan', to: 'default', by: 'host' }]);
  });

  it('a bad executable path says ENOENT, not a Node banner', async () => {
    const q = query({ prompt: 'x', options: { pathToExecutable: '/nonexistent/mend.js' } });
    await expect(
      (async () => {
        for await (const _ of q);
      })(),
    ).rejects.toMatchObject({ code: 'spawn_failed', message: expect.stringContaining('ENOENT') });
    const sb = makeSandbox('noexec');
    const file = join(sb.scratch, 'mend-bin');
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o644);
    const q2 = query({ prompt: 'x', options: { pathToExecutable: file } });
    await expect(
      (async () => {
        for await (const _ of q2);
      })(),
    ).rejects.toMatchObject({ code: 'spawn_failed', message: expect.stringContaining('not executable') });
    expect(existsSync(file)).toBe(true);
  });
});
