/**
 * The control protocol and the SDK under races and hostile input, with
 * the built CLI: lines that arrive together, answers that never come, requests that
 * are malformed, and processes that end while work is queued.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { query } from '../../src/sdk/index.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { cleanupSandboxes, logPathOf, makeSandbox, mend, readLog, spawnMend, waitFor, watchStdout, writeScript, type Sandbox } from '../support/cli.js';

afterAll(cleanupSandboxes);

const DANGLING = '38dff1b0-3406-4c0b-a5f4-8df5d96853fc';
const FAKE = resolve(import.meta.dirname, '../sdk/fake-cli.mjs');
const control = (id: string, request: Record<string, unknown>) => JSON.stringify({ type: 'control_request', request_id: id, request });
const user = (content: unknown) => JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content }, parent_tool_use_id: null });
const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

function install(sb: Sandbox, name = 'dangling-single-call', id = DANGLING): string {
  mkdirSync(sb.chats, { recursive: true });
  copyFileSync(join(CORPUS_DIR, name, 'session.jsonl'), logPathOf(sb, id));
  return id;
}
const args = (script: string) => ['--resume', DANGLING, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script];

describe('one continuation, one answer', () => {
  it('two continue_last_turn in one write: exactly one is accepted and runs once', async () => {
    const sb = makeSandbox('race');
    install(sb);
    const script = writeScript(sb, [{}, {}, { text: 'once' }, { text: 'twice' }]);
    const r = await mend(sb, args(script), {
      input: `${control('a', { subtype: 'continue_last_turn' })}\n${control('b', { subtype: 'continue_last_turn' })}\n`,
    });
    expect(r.exitCode).toBe(0);
    const out = lines(r.stdout);
    const answers = out.filter((m) => m['type'] === 'control_response').map((m) => m['response']['response']);
    expect(answers.map((a: Record<string, unknown>) => a['accepted']).sort()).toEqual([false, true]);
    expect(answers.find((a: Record<string, unknown>) => a['accepted'] === false)).toMatchObject({ code: 'turn_running' });
    expect(out.filter((m) => m['type'] === 'result')).toHaveLength(1);
    const log = readLog(logPathOf(sb, DANGLING));
    expect(log.filter((rec) => rec.type === 'system' && rec.subtype === 'recovery')).toHaveLength(1);
  });

  it('a continue followed at once by a prompt: the continuation runs first, then the prompt, each with one result', async () => {
    const sb = makeSandbox('race');
    install(sb);
    const script = writeScript(sb, [{}, {}, { text: 'continued' }, { text: 'prompted' }]);
    const r = await mend(sb, args(script), { input: `${control('a', { subtype: 'continue_last_turn' })}\n${user('next')}\n` });
    expect(r.exitCode).toBe(0);
    const results = lines(r.stdout).filter((m) => m['type'] === 'result');
    expect(results.map((m) => m['result'])).toEqual(['continued', 'prompted']);
  });

  it('a continue right before stdin closes still runs under the lease, and the lock is released only after', async () => {
    const sb = makeSandbox('race');
    install(sb);
    const script = writeScript(sb, [{}, {}, { text: 'done in time', delayMs: 20, chunkSize: 2 }]);
    const r = await mend(sb, args(script), { input: `${control('a', { subtype: 'continue_last_turn' })}\n` });
    expect(r.exitCode).toBe(0);
    expect(lines(r.stdout).filter((m) => m['type'] === 'result')).toEqual([expect.objectContaining({ result: 'done in time' })]);
    expect(existsSync(`${logPathOf(sb, DANGLING)}.lock`)).toBe(false);
    const log = readLog(logPathOf(sb, DANGLING));
    expect(log.at(-1)).toMatchObject({ type: 'assistant' });
  });
});

describe('every request and every user message gets its answer', () => {
  it('malformed control requests with a usable id get an error answer; empty user messages get an error result', async () => {
    const sb = makeSandbox('malformed');
    const script = writeScript(sb, [{ text: 'real' }]);
    const input = [
      JSON.stringify({ type: 'control_request', request_id: 'm1', request: {} }),
      JSON.stringify({ type: 'control_request', request_id: 'm2', request: { subtype: 5 } }),
      JSON.stringify({ type: 'control_request', request_id: 'm3', request: null }),
      user(''),
      user([]),
      user('real prompt'),
    ].join('\n');
    const r = await mend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], { input: `${input}\n` });
    expect(r.exitCode).toBe(0);
    const out = lines(r.stdout);
    const errors = out.filter((m) => m['type'] === 'control_response').map((m) => m['response']);
    expect(errors.map((e: Record<string, unknown>) => [e['request_id'], e['subtype'], e['code']])).toEqual([
      ['m1', 'error', 'invalid_control_request'],
      ['m2', 'error', 'invalid_control_request'],
      ['m3', 'error', 'invalid_control_request'],
    ]);
    const results = out.filter((m) => m['type'] === 'result');
    expect(results.map((m) => [m['is_error'], m['error']?.code ?? m['result']])).toEqual([
      [true, 'invalid_message'],
      [true, 'invalid_message'],
      [false, 'real'],
    ]);
  });

  it('a malformed answer to a pending can_use_tool denies at once instead of waiting for the timeout', async () => {
    const sb = makeSandbox('badanswer');
    const marker = join(sb.scratch, 'ran');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: `touch ${marker}` } }] }, { text: 'ok' }]);
    const sub = spawnMend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script, '--permission-timeout', '60000'], {
      stdin: 'pipe',
    });
    const watch = watchStdout(sub);
    sub.stdin!.write(`${control('i', { subtype: 'initialize' })}\n${user('go')}\n`);
    const ask = JSON.parse(await watch.waitFor((l) => l.includes('"subtype":"can_use_tool"'))) as { request_id: string };
    const started = Date.now();
    sub.stdin!.write(`${JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: ask.request_id, response: 'allow' } })}\n`);
    await watch.waitFor((l) => l.includes('"type":"result"'));
    expect(Date.now() - started).toBeLessThan(5000);
    sub.stdin!.end();
    await sub;
    expect(existsSync(marker)).toBe(false);
    expect(watch.text()).toContain('malformed control_response');
  });

  it('--permission-timeout past what a timer can hold is a usage error', async () => {
    const sb = makeSandbox('timeout');
    const r = await mend(sb, ['-p', 'x', '-o', 'stream-json', '--permission-timeout', '3000000000']);
    expect(r.exitCode).toBe(2);
  });
});

describe('the SDK never hangs', () => {
  it('a canUseTool callback that never settles: mend times out, cancels, and the query ends with its result', async () => {
    const sb = makeSandbox('sdkhang');
    const marker = join(sb.scratch, 'ran');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: `touch ${marker}` } }] }, { text: 'gave up' }]);
    let signalled = false;
    const q = query({
      prompt: 'go',
      options: {
        cwd: sb.cwd,
        env: { MEND_HOME: sb.home },
        scriptedResponses: script,
        extraArgs: ['--permission-timeout', '300'],
        canUseTool: (_n, _i, { signal }) => {
          signal.addEventListener('abort', () => (signalled = true));
          return new Promise(() => {});
        },
      },
    });
    const types: string[] = [];
    for await (const m of q) {
      types.push(m.type);
      if (m.type === 'result') break;
    }
    expect(types.at(-1)).toBe('result');
    expect(signalled).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('a CLI that exits 0 without a word, and one that prints garbage and stays, are typed errors', async () => {
    const silent = query({ prompt: 'x', options: { pathToExecutable: FAKE, env: { FAKE_CLI: 'silent' } } });
    await expect(
      (async () => {
        for await (const _ of silent);
      })(),
    ).rejects.toMatchObject({ code: 'exited_before_init' });
    const garbage = query({
      prompt: 'x',
      options: { pathToExecutable: FAKE, env: { FAKE_CLI: 'garbage' }, startupTimeoutMs: 500, shutdown: { stdinGraceMs: 50, killGraceMs: 200 } },
    });
    await expect(
      (async () => {
        for await (const _ of garbage);
      })(),
    ).rejects.toMatchObject({ code: 'startup_timeout' });
  });

  it('a locked session reaches the host as a typed error naming the holder', async () => {
    const sb = makeSandbox('sdklock');
    install(sb);
    const holder = spawnMend(sb, ['--resume', DANGLING, '--input-format', 'stream-json', '-o', 'stream-json'], { stdin: 'pipe' });
    const watch = watchStdout(holder);
    await watch.waitFor((l) => l.includes('"subtype":"recovery"'));
    const q = query({ prompt: 'x', options: { cwd: sb.cwd, env: { MEND_HOME: sb.home }, resume: DANGLING } });
    await expect(
      (async () => {
        for await (const _ of q);
      })(),
    ).rejects.toMatchObject({ name: 'MendCliError', code: 'session_locked', holder: { pid: holder.pid } });
    holder.stdin!.end();
    await holder;
  });

  it('aborting through abortSignal during an approval interrupts the turn and records it', async () => {
    const sb = makeSandbox('sdkabort');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: 'true' } }] }, { text: 'never' }]);
    const controller = new AbortController();
    const q = query({
      prompt: 'go',
      options: {
        cwd: sb.cwd,
        env: { MEND_HOME: sb.home },
        scriptedResponses: script,
        abortSignal: controller.signal,
        canUseTool: () => {
          setTimeout(() => controller.abort(), 10);
          return new Promise(() => {});
        },
      },
    });
    await expect(
      (async () => {
        for await (const _ of q);
      })(),
    ).rejects.toMatchObject({ name: 'AbortError' });
    const [log] = readFileSync(
      join(
        sb.chats,
        (await import('node:fs')).readdirSync(sb.chats).find((f) => f.endsWith('.jsonl'))!,
      ),
      'utf8',
    )
      .trim()
      .split('\n')
      .slice(-1);
    expect(JSON.parse(log!)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'interrupt' } });
  });
});

describe('signals and interrupts', () => {
  it('SIGTERM with user messages still queued: each gets a result', async () => {
    const sb = makeSandbox('sigterm');
    const script = writeScript(sb, [{ text: 'slow', stallMs: 'forever' }, { text: 'b' }, { text: 'c' }]);
    const sub = spawnMend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], { stdin: 'pipe' });
    const watch = watchStdout(sub);
    sub.stdin!.write(`${user('one')}\n${user('two')}\n${user('three')}\n`);
    await watch.waitFor((l) => l.includes('"type":"system"') && l.includes('init'));
    await new Promise((r) => setTimeout(r, 300));
    sub.kill('SIGTERM');
    const done = await sub;
    expect(done.exitCode).toBe(143);
    expect(lines(watch.text()).filter((m) => m['type'] === 'result')).toHaveLength(3);
  });

  it('an interrupt keeps the partial text in the log and sends it to the host as an assistant line', async () => {
    const sb = makeSandbox('partial');
    const script = writeScript(sb, [{ text: 'partial answer that stalls', chunkSize: 8, stallMs: 'forever' }]);
    const sub = spawnMend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--include-partial-messages', '--scripted-responses', script], {
      stdin: 'pipe',
    });
    const watch = watchStdout(sub);
    sub.stdin!.write(`${user('go')}\n`);
    await watch.waitFor((l) => l.includes('"text_delta"'));
    sub.stdin!.write(`${control('x', { subtype: 'interrupt' })}\n`);
    await watch.waitFor((l) => l.includes('"type":"result"'));
    sub.stdin!.end();
    await sub;
    const assistant = lines(watch.text()).find((m) => m['type'] === 'assistant');
    expect(assistant?.['message']['content'][0]).toEqual({ type: 'text', text: 'partial ' });
  });
});

describe('backpressure', () => {
  it('a host that stops reading stdout does not grow mend: the turn waits for the pipe', async () => {
    const sb = makeSandbox('backpressure');
    const script = writeScript(sb, [{ text: 'y'.repeat(4_000_000), chunkSize: 1000 }]);
    const sub = spawnMend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--include-partial-messages', '--scripted-responses', script], {
      stdin: 'pipe',
      timeout: 60_000,
    });
    sub.stdout!.pause();
    sub.stdin!.write(`${user('flood me')}\n`);
    // The engine waits on the full pipe: the turn cannot finish while nobody reads. Wait for the
    // turn to start (the prompt recorded; slow on a loaded machine), then give it time to run on.
    const logs = () => (existsSync(sb.chats) ? readdirSync(sb.chats).filter((f) => f.endsWith('.jsonl')) : []);
    await waitFor(() => logs().length > 0 && readLog(join(sb.chats, logs()[0]!)).length > 0, 45_000, 'the prompt recorded');
    await new Promise((r) => setTimeout(r, 1500));
    const rss = Number(readFileSync(`/proc/${sub.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]) * 1024;
    expect(rss).toBeLessThan(200 * 1024 * 1024);
    const [log] = logs();
    expect(readLog(join(sb.chats, log!)).map((r) => r.type)).toEqual(['user']);
    sub.stdout!.resume();
    sub.stdin!.end();
    const done = await sub;
    expect(done.exitCode).toBe(0);
  });

  it('a flood of user messages is not all read at once: stdin is read as turns drain', async () => {
    const sb = makeSandbox('inputflood');
    const script = writeScript(
      sb,
      Array.from({ length: 200 }, () => ({ text: 'ok' })),
    );
    const lines = Array.from({ length: 200 }, (_, i) => user(`message ${i}`)).join('\n') + '\n';
    const r = await mend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], { input: lines, timeout: 60_000 });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n').filter((l) => l.includes('"type":"result"'))).toHaveLength(200);
  });
});

describe('the plan while a turn runs', () => {
  it('get_recovery_plan during a running turn answers running (this process holds it), never a crash', async () => {
    const sb = makeSandbox('liveplan');
    const script = writeScript(sb, [{ text: 'thinking', chunkSize: 2, stallMs: 'forever' }]);
    const sub = spawnMend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--include-partial-messages', '--scripted-responses', script], {
      stdin: 'pipe',
    });
    const watch = watchStdout(sub);
    sub.stdin!.write(`${user('go')}\n`);
    await watch.waitFor((l) => l.includes('"text_delta"'));
    sub.stdin!.write(`${control('p', { subtype: 'get_recovery_plan' })}\n`);
    const answer = JSON.parse(await watch.waitFor((l) => l.includes('"request_id":"p"'))) as { response: { response: Record<string, unknown> } };
    expect(answer.response.response).toMatchObject({ cause: 'running', can_continue: false, active_writer: { pid: sub.pid } });
    expect(String(answer.response.response['visible_notice'])).toContain('running, not crashed');
    sub.kill('SIGTERM');
    await sub;
  });
});
