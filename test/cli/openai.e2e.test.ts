/**
 * The built CLI against a real loopback chat-completions server: tool round trips,
 * resuming interrupted prompts and tool turns, stdout order on resume, and the API key
 * never leaking (stdout, stderr, session log), also on an HTTP 401.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupSandboxes,
  API_KEY,
  LogBuilder,
  logPathOf,
  makeSandbox,
  mend,
  readLog,
  sessionFiles,
  snapshotTree,
  spawnMend,
  finished,
  transcript,
  watchStdout,
  type MendRun,
  type Sandbox,
} from '../support/cli.js';
import { callIdCounts, countInMessages, errorReply, startOpenAIServer, textReply, toolCallReply, type OpenAIServer } from '../support/openai-server.js';

const OPENAI_ENV = { OPENAI_API_KEY: API_KEY, MEND_OPENAI_MAX_RETRIES: '0' };

interface Ctx {
  server: OpenAIServer;
  sb: Sandbox;
  openaiArgs: () => string[];
  run: (args: string[]) => Promise<MendRun>;
  expectNoSecret: (...runs: MendRun[]) => void;
}

/** A private server and sandbox per test, so the tests can run concurrently. */
async function setup(onTestFinished: (fn: () => Promise<void>) => void): Promise<Ctx> {
  const server = await startOpenAIServer();
  onTestFinished(() => server.close());
  const sb = makeSandbox('openai');
  const openaiArgs = () => ['--base-url', server.baseURL, '--model', 'test-model'];
  return {
    server,
    sb,
    openaiArgs,
    run: (args) => mend(sb, [...args, ...openaiArgs()], { env: OPENAI_ENV }),
    /** The key must not appear in anything a run leaves behind: stdout, stderr, any file under MEND_HOME. */
    expectNoSecret(...runs) {
      for (const r of runs) {
        expect(r.stdout).not.toContain('SECRET-123');
        expect(r.stderr).not.toContain('SECRET-123');
      }
      const files = Object.keys(snapshotTree(sb.home)).filter((p) => !p.endsWith('/'));
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) expect(readFileSync(join(sb.home, file), 'utf8'), file).not.toContain('SECRET-123');
    },
  };
}

afterAll(cleanupSandboxes);

describe.concurrent('mend against a loopback OpenAI server', { timeout: 60_000 }, () => {
  it('runs a prompt with a tool-call round trip (two parallel calls) and answers every call id exactly once', async ({ onTestFinished }) => {
    const { server, sb, run, expectNoSecret } = await setup(onTestFinished);
    server.enqueue(
      toolCallReply(
        [
          { id: 'call_rt_1', name: 'run_shell_command', args: { command: 'echo round-trip-one' } },
          { id: 'call_rt_2', name: 'run_shell_command', args: { command: 'echo round-trip-two' } },
        ],
        { text: 'Running two commands.', argPieces: 4, usage: [30, 12] },
      ),
      textReply('All done.', { usage: [20, 5] }),
    );
    const r = await run(['-p', 'Please run the two commands', '--approval-mode', 'yolo', '-o', 'stream-json']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);

    const t = transcript(r.stdout);
    expect(t.kinds).toEqual(['system:init', 'assistant', 'user', 'user', 'assistant', 'result']);
    expect(t.init).toMatchObject({ resumed: false, model: 'test-model', permission_mode: 'yolo' });
    expect(t.assistants[0]!.message.content).toEqual([
      { type: 'text', text: 'Running two commands.' },
      { type: 'tool_use', id: 'call_rt_1', name: 'run_shell_command', input: { command: 'echo round-trip-one' } },
      { type: 'tool_use', id: 'call_rt_2', name: 'run_shell_command', input: { command: 'echo round-trip-two' } },
    ]);
    expect(t.assistants[0]!.message.stop_reason).toBe('tool_use');
    const toolResults = t.users.flatMap((u) => (Array.isArray(u.message.content) ? u.message.content : []));
    expect(toolResults.map((b) => (b.type === 'tool_result' ? [b.tool_use_id, b.is_error] : b.type))).toEqual([
      ['call_rt_1', false],
      ['call_rt_2', false],
    ]);
    expect(t.result).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'All done.',
      num_turns: 2,
      usage: { input_tokens: 50, output_tokens: 17 },
      permission_denials: [],
    });
    for (const m of t.messages) expect(m.session_id).toBe(t.init.session_id);

    expect(server.unexpected).toBe(0);
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests.map((q) => q.body);
    expect(server.requests[0]!.url).toBe('/v1/chat/completions');
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first!.model).toBe('test-model');
    expect(first!.stream).toBe(true);
    // The system prompt comes first: the project root, the platform, the date, the boundary and the crash rule.
    const system = first!.messages[0] as { role: string; content: string };
    expect(system.role).toBe('system');
    expect(system.content).toContain(`Project root: ${sb.cwd}`);
    expect(system.content).toContain(`Platform: ${process.platform}`);
    expect(system.content).toMatch(/Date: \d{4}-\d{2}-\d{2}/);
    expect(system.content).toContain('never run again automatically');
    expect(system.content).toContain('run_shell_command is not confined');
    expect(first!.messages.slice(1)).toEqual([{ role: 'user', content: 'Please run the two commands' }]);
    expect(first!.tools?.map((tl) => tl.function.name).sort()).toEqual([
      'edit',
      'glob',
      'grep_search',
      'list_directory',
      'read_file',
      'run_shell_command',
      'write_file',
    ]);

    expect(second!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    const assistant = second!.messages[2]!;
    expect(assistant.tool_calls?.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['call_rt_1', 'run_shell_command', { command: 'echo round-trip-one' }],
      ['call_rt_2', 'run_shell_command', { command: 'echo round-trip-two' }],
    ]);
    const tools = second!.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.tool_call_id)).toEqual(['call_rt_1', 'call_rt_2']);
    expect(tools[0]!.content).toContain('round-trip-one');
    expect(tools[1]!.content).toContain('round-trip-two');
    expect(Object.fromEntries(callIdCounts(second!))).toEqual({
      call_rt_1: { calls: 1, results: 1 },
      call_rt_2: { calls: 1, results: 1 },
    });

    // The log holds the same turn: user, assistant, two results, assistant.
    const [log] = sessionFiles(sb);
    expect(log).toBe(logPathOf(sb, t.init.session_id));
    expect(readLog(log!).map((rec) => rec.type)).toEqual(['user', 'assistant', 'tool_result', 'tool_result', 'assistant']);
    expectNoSecret(r);
  });

  it('--continue --continue-interrupted after a kill -9 mid-stream sends the trailing prompt exactly once', async ({ onTestFinished }) => {
    const { server, sb, run, openaiArgs, expectNoSecret } = await setup(onTestFinished);
    const PROMPT = 'PROMPT-7f3a: summarise the repository layout';
    server.enqueue(textReply('This answer never finishes because', { stallAfter: 3 }));
    const sub = spawnMend(sb, ['-p', PROMPT, '-o', 'stream-json', ...openaiArgs()], { env: OPENAI_ENV });
    await server.waitForStall();
    sub.kill('SIGKILL');
    const crashed = await finished(sub);
    expect(crashed.signal).toBe('SIGKILL');

    const [log] = sessionFiles(sb);
    expect(readLog(log!).map((rec) => rec.type)).toEqual(['user']);

    server.enqueue(textReply('Here is the summary.'));
    const r = await run(['--continue', '--continue-interrupted', '-o', 'stream-json', '--include-partial-messages']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const t = transcript(r.stdout);
    expect(t.recovery).toMatchObject({
      kind: 'interrupted_prompt',
      cause: 'crash',
      recovered: true,
      action: 'continue',
      continuation: { mode: 'retry_user_parts', part_count: 1 },
    });

    // Order: init, recovery, then model output (stream events and the assistant message), one result.
    const recoveryAt = t.kinds.indexOf('system:recovery');
    expect(recoveryAt).toBe(1);
    const streamEvents = t.kinds.flatMap((k, i) => (k === 'stream_event' ? [i] : []));
    expect(streamEvents.length).toBeGreaterThan(0);
    expect(Math.min(...streamEvents)).toBeGreaterThan(recoveryAt);
    expect(t.kinds.indexOf('assistant')).toBeGreaterThan(recoveryAt);
    expect(t.result).toMatchObject({ subtype: 'success', result: 'Here is the summary.' });

    expect(server.requests).toHaveLength(2);
    const body = server.requests[1]!.body;
    expect(countInMessages(body, PROMPT)).toBe(1);
    expect(body.messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'user', content: PROMPT }]);

    // The prompt is on disk once too: the continuation never writes it again.
    const records = readLog(log!);
    const prompts = records.filter((rec) => rec.type === 'user' && JSON.stringify(rec.message).includes('PROMPT-7f3a'));
    expect(prompts).toHaveLength(1);
    expect(records.at(-1)).toMatchObject({ type: 'assistant', message: { parts: [{ text: 'Here is the summary.' }] } });
    expectNoSecret(crashed, r);
  });

  it('--continue-interrupted on an interrupted tool turn sends each call id once as a call and once as a result', async ({ onTestFinished }) => {
    const { server, sb, run, expectNoSecret } = await setup(onTestFinished);
    const id = '3f1d9a52-7c1e-4f0a-9b7d-2a6e5c4b3d21';
    const path = logPathOf(sb, id);
    new LogBuilder(id, { cwd: sb.cwd })
      .user('TOOL-TURN-PROMPT: check the build')
      .assistant([
        { text: 'Checking two things.' },
        { functionCall: { id: 'call_a', name: 'run_shell_command', args: { command: 'echo recorded-a' } } },
        { functionCall: { id: 'call_b', name: 'read_file', args: { file_path: '/tmp/nowhere.txt' } } },
      ])
      .toolResult('call_a', 'run_shell_command', 'recorded-a output')
      .write(path);
    const before = readLog(path).length;

    server.enqueue(textReply('Build looks fine.'));
    const r = await run(['--resume', id, '--continue-interrupted', '-o', 'stream-json']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const t = transcript(r.stdout);
    // The synthetic result that closes the dangling call reaches the host as a tool result, like any other.
    expect(t.kinds).toEqual(['system:init', 'system:recovery', 'user', 'assistant', 'result']);
    expect(t.users[0]!.message.content).toEqual([
      expect.objectContaining({ type: 'tool_result', is_error: true, content: expect.stringContaining('outcome is unknown') }),
    ]);
    expect(t.recovery).toMatchObject({
      kind: 'interrupted_turn',
      cause: 'crash',
      action: 'continue',
      repairs: [{ type: 'synthesized_tool_result', count: 1 }],
      continuation: { mode: 'tool_result_parts', part_count: 2 },
    });

    expect(server.requests).toHaveLength(1);
    const body = server.requests[0]!.body;
    expect(Object.fromEntries(callIdCounts(body))).toEqual({ call_a: { calls: 1, results: 1 }, call_b: { calls: 1, results: 1 } });
    expect(countInMessages(body, 'TOOL-TURN-PROMPT')).toBe(1);
    const toolMsgs = body.messages.filter((m) => m.role === 'tool');
    expect(toolMsgs.find((m) => m.tool_call_id === 'call_a')!.content).toBe('recorded-a output');
    const synthetic = toolMsgs.find((m) => m.tool_call_id === 'call_b')!.content ?? '';
    expect(synthetic).toMatch(/outcome is unknown/i);
    expect(synthetic).not.toContain('recorded-a');

    // Written: the recovery record, ONE synthetic result (call_b, marked with the plan id), the answer.
    const added = readLog(path).slice(before);
    expect(added.map((rec) => (rec.type === 'system' ? `system:${rec.subtype}` : rec.type))).toEqual(['system:recovery', 'tool_result', 'assistant']);
    expect(added[1]).toMatchObject({ recovery: { synthetic: true, planId: t.recovery!.plan_id }, toolCallResult: { callId: 'call_b' } });
    expectNoSecret(r);
  });

  it('streams partial messages live: deltas sent before a server stall reach stdout before the stream continues', async ({ onTestFinished }) => {
    const { server, sb, openaiArgs, expectNoSecret } = await setup(onTestFinished);
    server.enqueue(textReply('Hello, world! Done.', { chunkSize: 6, stallAfter: 2 }));
    const sub = spawnMend(sb, ['-p', 'greet', '-o', 'stream-json', '--include-partial-messages', ...openaiArgs()], { env: OPENAI_ENV });
    const out = watchStdout(sub);
    await server.waitForStall();
    const first = await out.waitFor((l) => l.includes('text_delta'));
    expect(first).toContain('Hello,');
    expect(out.text()).not.toContain('"type":"result"');
    server.release();
    const r = await finished(sub);
    expect(r.exitCode).toBe(0);
    const t = transcript(r.stdout);
    expect(t.kinds[0]).toBe('system:init');
    expect(t.kinds.indexOf('assistant')).toBeGreaterThan(t.kinds.indexOf('stream_event'));
    expect(t.result).toMatchObject({ subtype: 'success', result: 'Hello, world! Done.' });
    expectNoSecret(r);
  });

  it('a clean session still gets a recovery line (kind clean, recovered false) before the model output', async ({ onTestFinished }) => {
    const { server, sb, run } = await setup(onTestFinished);
    const id = '0b6f7c2e-1d4a-4e8b-9c3f-5a2d1e0f9b8c';
    new LogBuilder(id, { cwd: sb.cwd })
      .user('first question')
      .assistant([{ text: 'first answer' }])
      .write(logPathOf(sb, id));
    server.enqueue(textReply('second answer'));
    const r = await run(['--resume', id, '-p', 'second question', '-o', 'stream-json', '--include-partial-messages']);
    expect(r.exitCode).toBe(0);
    const t = transcript(r.stdout);
    expect(t.kinds[1]).toBe('system:recovery');
    expect(t.kinds.slice(2).every((k) => k === 'stream_event' || k === 'assistant' || k === 'result')).toBe(true);
    expect(t.kinds.filter((k) => k === 'stream_event').length).toBeGreaterThan(0);
    expect(t.recovery).toMatchObject({
      kind: 'clean',
      recovered: false,
      cause: 'none',
      can_continue: false,
      action: 'none',
      continuation: null,
      repairs: [],
      session_id: id,
    });
    expect(server.requests[0]!.body.messages.filter((m) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
    ]);
    expect(t.result).toMatchObject({ subtype: 'success', result: 'second answer' });
  });

  it('an HTTP 401 whose body echoes the key is a provider_error that leaks the key nowhere', async ({ onTestFinished }) => {
    const { server, sb, run, expectNoSecret } = await setup(onTestFinished);
    const body = {
      error: {
        message: `Incorrect API key provided: ${API_KEY}. Authorization: Bearer ${API_KEY}`,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      },
    };
    server.enqueue(errorReply(401, body), errorReply(401, body), errorReply(401, body));
    const streamed = await run(['-p', 'hello', '-o', 'stream-json', '--debug']);
    expect(streamed.exitCode).toBe(1);
    const t = transcript(streamed.stdout);
    expect(t.result).toMatchObject({ subtype: 'error_during_execution', is_error: true, error: { code: 'provider_error' } });
    expect(t.result.error!.message).toContain('401');

    const text = await run(['-p', 'hello again', '--debug']);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/^mend: error \[provider_error\]: .*401/m);

    const json = await run(['-p', 'and again', '-o', 'json']);
    expect(json.exitCode).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ type: 'result', is_error: true, error: { code: 'provider_error' } });

    expect(server.requests).toHaveLength(3);
    expect(server.requests.every((q) => q.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
    expect(sessionFiles(sb)).toHaveLength(3);
    expectNoSecret(streamed, text, json);
  });
});
