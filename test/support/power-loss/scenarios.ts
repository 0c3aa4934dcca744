/**
 * The runs the power-loss harness traces: one per way mend writes a session (a
 * headless turn with parallel tools, file tools, stream-json turns, a continuation,
 * a fork, a new project, the daemon, ACP). Each prepares its sandbox untraced, traces
 * the run, checks that the run itself did what it should (so a broken scenario cannot
 * pass as "no violations"), then checks every crash state.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { baseEnv, makeSandbox, waitFor, writeScript, type Sandbox } from '../cli.js';
import { checkPowerLoss, type PowerLossReport } from './state-checks.js';
import { TRACED_BIN, tracedRun, type Child, type TracedRun } from './traced-run.js';

export interface ScenarioResult {
  name: string;
  run: TracedRun;
  report: PowerLossReport;
}

export interface Scenario {
  name: string;
  /** Runs (traced) and returns the run; throws when the run itself went wrong. */
  run: (sb: Sandbox) => Promise<TracedRun>;
}

const YOLO = ['--approval-mode', 'yolo'];

function expectRun(run: TracedRun, what: string, ok: (run: TracedRun) => boolean): TracedRun {
  if (!ok(run))
    throw new Error(
      `${what}: the traced run did not do what the scenario needs (exit ${run.exitCode}, ${run.trace.toolStarts.length} tool starts, barriers: ${run.trace.barriers
        .map((b) => `${b.kind} ${b.what.slice(0, 40)}`)
        .join(' | ')
        .slice(0, 1500)})\nstdout: ${run.stdout.slice(-800)}\nstderr: ${run.stderr.slice(-800)}`,
    );
  return run;
}

/** An untraced run to prepare a sandbox. */
function prepare(sb: Sandbox, args: string[], env: Record<string, string> = {}): void {
  spawnSync('node', [TRACED_BIN, ...args], { cwd: sb.cwd, env: baseEnv(sb, env), stdio: 'ignore', timeout: 60_000 });
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'first session of a new project (one turn, text output, no MEND_HOME yet)',
    async run(sb) {
      const script = writeScript(sb, [{ text: 'Hello from a brand new project.' }]);
      const run = await tracedRun(sb, ['--scripted-responses', script, '-p', 'hi']);
      return expectRun(run, 'first session', (r) => r.exitCode === 0 && r.stdout.includes('brand new project'));
    },
  },
  {
    name: 'headless turn with parallel tool calls (stream-json)',
    async run(sb) {
      const script = writeScript(sb, [
        {
          text: 'Running three commands.',
          toolCalls: [
            { id: 'call_a', name: 'run_shell_command', args: { command: 'echo alpha' } },
            { id: 'call_b', name: 'run_shell_command', args: { command: 'sleep 0.05; echo beta' } },
            { id: 'call_c', name: 'run_shell_command', args: { command: 'echo gamma' } },
          ],
        },
        { text: 'All three ran.' },
      ]);
      const run = await tracedRun(sb, ['--scripted-responses', script, ...YOLO, '-o', 'stream-json', '--include-partial-messages', '-p', 'run them']);
      return expectRun(run, 'parallel tools', (r) => r.exitCode === 0 && r.stdout.includes('All three ran.') && r.trace.toolStarts.length >= 3);
    },
  },
  {
    name: 'write_file and edit',
    async run(sb) {
      writeFileSync(join(sb.cwd, 'notes.txt'), 'alpha\nbeta\n');
      const script = writeScript(sb, [
        {
          text: 'Writing.',
          toolCalls: [
            { id: 'call_new', name: 'write_file', args: { file_path: join(sb.cwd, 'docs', 'deep', 'new.txt'), content: 'a new file\n'.repeat(60) } },
            { id: 'call_over', name: 'write_file', args: { file_path: join(sb.cwd, 'notes.txt'), content: 'alpha\nbeta\ndelta\n' } },
          ],
        },
        {
          text: 'Editing.',
          toolCalls: [{ id: 'call_edit', name: 'edit', args: { file_path: join(sb.cwd, 'notes.txt'), old_string: 'beta', new_string: 'BETA' } }],
        },
        { text: 'Files written.' },
      ]);
      const run = await tracedRun(sb, ['--scripted-responses', script, ...YOLO, '-o', 'stream-json', '-p', 'write files']);
      return expectRun(run, 'write_file and edit', (r) => r.exitCode === 0 && r.stdout.includes('Files written.') && !r.stdout.includes('"is_error":true'));
    },
  },
  {
    name: 'three turns and a mode change over stream-json input',
    async run(sb) {
      const script = writeScript(sb, [
        { text: 'Checking.', toolCalls: [{ id: 'call_1', name: 'run_shell_command', args: { command: 'echo turn one' } }] },
        { text: 'Turn one done.' },
        { text: 'Turn two done.' },
        { text: 'Turn three done.' },
      ]);
      const user = (text: string) =>
        JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: text }, parent_tool_use_id: null }) + '\n';
      const results = (out: string) => out.split('\n').filter((l) => l.startsWith('{"type":"result"')).length;
      const run = await tracedRun(sb, ['--scripted-responses', script, ...YOLO, '--input-format', 'stream-json', '-o', 'stream-json'], {
        // One step at a time, so the mode change falls between turns (its control response is an acknowledgement too).
        drive: async (child, stdout) => {
          child.stdin.write(user('first'));
          await waitFor(() => results(stdout()) === 1, 30_000, 'turn one');
          child.stdin.write(
            JSON.stringify({ type: 'control_request', request_id: 'mode_1', request: { subtype: 'set_permission_mode', mode: 'default' } }) + '\n',
          );
          await waitFor(() => stdout().includes('"mode_1"'), 30_000, 'the control response');
          child.stdin.write(user('second'));
          await waitFor(() => results(stdout()) === 2, 30_000, 'turn two');
          child.stdin.end(user('third'));
        },
      });
      return expectRun(
        run,
        'stream-json turns',
        (r) =>
          r.exitCode === 0 &&
          r.stdout.includes('Turn three done.') &&
          r.stdout.includes('control_response') &&
          r.trace.ops.some((op) => op.t === 'write' && op.data.includes('approval_mode_changed')),
      );
    },
  },
  {
    name: 'continuation of a crashed turn (--continue-interrupted)',
    async run(sb) {
      const id = randomUUID();
      const script = writeScript(sb, [
        { text: 'Starting.', toolCalls: [{ id: 'call_x', name: 'run_shell_command', args: { command: 'echo first try' } }] },
        { text: 'Recovered and finished.' },
      ]);
      prepare(sb, ['--scripted-responses', script, ...YOLO, '--session-id', id, '-p', 'go'], { MEND_FAULT: 'kill-after-write:2' });
      const run = await tracedRun(sb, ['--scripted-responses', script, ...YOLO, '--resume', id, '--continue-interrupted', '-o', 'stream-json']);
      return expectRun(run, 'continuation', (r) => r.exitCode === 0 && r.stdout.includes('Recovered and finished.'));
    },
  },
  {
    name: 'fork (--fork-session)',
    async run(sb) {
      const id = randomUUID();
      const script = writeScript(sb, [{ text: 'The original answer.' }, { text: 'The forked answer.' }]);
      prepare(sb, ['--scripted-responses', script, '--session-id', id, '-p', 'first']);
      const run = await tracedRun(sb, ['--scripted-responses', script, ...YOLO, '--resume', id, '--fork-session', '-o', 'stream-json', '-p', 'again']);
      return expectRun(run, 'fork', (r) => r.exitCode === 0 && r.stdout.includes('The forked answer.'));
    },
  },
  {
    name: 'daemon turn (mend serve: HTTP and SSE)',
    async run(sb) {
      const script = writeScript(sb, [
        { text: 'Daemon at work.', toolCalls: [{ id: 'call_d', name: 'run_shell_command', args: { command: 'echo from the daemon' } }] },
        { text: 'Daemon turn done.' },
      ]);
      const sessionId = randomUUID();
      const run = await tracedRun(sb, ['serve', '--port', '0', '--scripted-responses', script, ...YOLO], {
        drive: async (child, stdout) => {
          child.stdin.end();
          await waitFor(() => stdout().includes('\n'), 30_000, 'the ready line');
          const ready = JSON.parse(stdout().split('\n')[0]!) as { url: string; pid: number };
          await post(ready.url, '/session', { sessionId, cwd: sb.cwd });
          const events = openEvents(ready.url, `/session/${sessionId}/events`);
          await post(ready.url, `/session/${sessionId}/prompt`, { prompt: [{ type: 'text', text: 'go' }] });
          await waitFor(() => /"type":"turn_(complete|error)"/.test(events.text()), 30_000, 'turn_complete');
          events.close();
          process.kill(ready.pid, 'SIGTERM');
        },
      });
      return expectRun(
        run,
        'daemon',
        (r) => r.exitCode === 0 && r.trace.barriers.some((b) => b.kind === 'socket' && b.what.includes('turn_complete')) && r.trace.toolStarts.length === 1,
      );
    },
  },
  {
    name: 'ACP turn (mend --acp)',
    async run(sb) {
      mkdirSync(join(sb.cwd, 'out'));
      const script = writeScript(sb, [
        {
          text: 'ACP at work.',
          toolCalls: [
            { id: 'call_w', name: 'write_file', args: { file_path: join(sb.cwd, 'out', 'acp.txt'), content: 'written over ACP\n' } },
            { id: 'call_s', name: 'run_shell_command', args: { command: 'echo from acp' } },
          ],
        },
        { text: 'ACP turn done.' },
      ]);
      const run = await tracedRun(sb, ['--acp', '--scripted-responses', script, ...YOLO], {
        drive: async (child, stdout) => {
          const rpc = jsonRpc(child, stdout);
          await rpc('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
          const session = (await rpc('session/new', { cwd: sb.cwd, mcpServers: [] })) as { sessionId: string };
          await rpc('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'go' }] });
          child.stdin.end();
        },
      });
      return expectRun(run, 'acp', (r) => r.exitCode === 0 && r.stdout.includes('end_turn') && r.stdout.includes('ACP turn done.'));
    },
  },
];

export async function runScenario(scenario: Scenario, maxStates: number): Promise<ScenarioResult> {
  const sb = makeSandbox('power-loss');
  const run = await scenario.run(sb);
  const report = await checkPowerLoss(run.trace, {
    isLog: (p) => p.startsWith(sb.home + '/') && p.endsWith('.jsonl'),
    cwd: sb.cwd,
    maxStates,
  });
  return { name: scenario.name, run, report };
}

function post(url: string, path: string, body: unknown): Promise<unknown> {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => {
    const text = await r.text();
    if (r.status >= 300) throw new Error(`POST ${path}: ${r.status} ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  });
}

function openEvents(url: string, path: string): { text: () => string; close: () => void } {
  let text = '';
  const req = request(new URL(path, url), { headers: { accept: 'text/event-stream' } }, (res) => res.on('data', (d: Buffer) => (text += d.toString())));
  req.on('error', () => undefined);
  req.end();
  return { text: () => text, close: () => req.destroy() };
}

/** Newline-delimited JSON-RPC over the child's stdio: one request at a time. */
function jsonRpc(child: Child, stdout: () => string): (method: string, params: unknown) => Promise<unknown> {
  let id = 0;
  return async (method, params) => {
    const mine = ++id;
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }) + '\n');
    let answer: { result?: unknown; error?: unknown } | undefined;
    await waitFor(
      () =>
        (answer = stdout()
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { id?: number; method?: string; result?: unknown; error?: unknown })
          .find((m) => m.id === mine && m.method === undefined)) !== undefined,
      30_000,
      `the answer to ${method}`,
    );
    if (answer!.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer!.error)}`);
    return answer!.result;
  };
}
