/**
 * The SDK against the real, built CLI (scripted model, private MEND_HOME and cwd):
 * multi-turn sessions, crash recovery with continueLastTurn, host approvals,
 * interrupts, bad input lines and process cleanup.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MendProcessError, ProcessTransport, Query, type SDKMessage, type SDKResultMessage } from '../../src/sdk/index.js';
import type { ChatRecord } from '../../src/session/records.js';
import { cleanupSandboxes, makeSandbox, mend, waitFor, writeScript, type Sandbox } from '../support/cli.js';
import { alive, assistantText, Channel, collect, nextMatching, onlyLog, pidOf, query, sdkOptions, within } from './helpers.js';

afterAll(cleanupSandboxes);

const isResult = (m: SDKMessage): m is SDKResultMessage => m.type === 'result';

function userTexts(records: ChatRecord[]): string[] {
  return records.flatMap((r) => (r.type === 'user' ? r.message.parts.map((p) => p.text ?? '') : []));
}

function toolResultIds(records: ChatRecord[]): string[] {
  return records.flatMap((r) => (r.type === 'tool_result' ? r.message.parts.map((p) => p.functionResponse?.id ?? '?') : []));
}

async function planJson(sb: Sandbox): Promise<Record<string, unknown>> {
  const [log] = (await import('../support/cli.js')).sessionFiles(sb);
  const run = await mend(sb, ['plan', log!, '--json']);
  expect(run.exitCode).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/** A session whose last turn was cut by kill -9 while the model was streaming: the prompt is recorded, no answer. */
async function crashDuringPrompt(sb: Sandbox, prompt: string): Promise<void> {
  const script = writeScript(sb, [{ text: 'thinking about it...', stallMs: 'forever' }]);
  const q = query({ prompt, options: sdkOptions(sb, script, { includePartialMessages: true }) });
  await nextMatching(q, (m) => m.type === 'stream_event');
  process.kill(pidOf(q), 'SIGKILL');
  const error = await collect(q).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MendProcessError);
  expect(error).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
}

describe.concurrent('SDK against the real CLI', () => {
  it('runs a string prompt and ends by itself', async () => {
    const sb = makeSandbox('sdk-string');
    const opts = sdkOptions(sb, writeScript(sb, [{ text: 'hello from the script' }]));
    const q = query({ prompt: 'hi', options: opts });
    const messages = await collect(q);
    expect(messages.map((m) => (m.type === 'system' ? `system:${m.subtype}` : m.type))).toEqual(['system:init', 'assistant', 'result']);
    expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'hello from the script' });
    await expect(q.recovery).resolves.toBeNull();
    expect(opts.stderrText()).toBe('');
    expect(alive(pidOf(q))).toBe(false);
  });

  it('runs a multi-turn session from an async iterable prompt in one process', async () => {
    const sb = makeSandbox('sdk-multi');
    const script = writeScript(sb, [{ text: 'first answer' }, { text: 'second answer' }]);
    async function* prompt() {
      yield { type: 'user' as const, message: { role: 'user' as const, content: 'question one' } };
      yield { type: 'user' as const, message: { role: 'user' as const, content: 'question two' } };
    }
    const q = query({ prompt: prompt(), options: sdkOptions(sb, script) });
    const messages = await collect(q);
    const results = messages.filter(isResult);
    expect(results.map((r) => [r.subtype, r.result])).toEqual([
      ['success', 'first answer'],
      ['success', 'second answer'],
    ]);
    expect(messages.filter((m) => m.type === 'system' && m.subtype === 'init')).toHaveLength(1);
    const log = onlyLog(sb);
    expect(userTexts(log)).toEqual(['question one', 'question two']);
    expect(log.filter((r) => r.type === 'assistant')).toHaveLength(2);
  });

  it('continues an interrupted prompt: the prompt reaches the model once', async () => {
    const sb = makeSandbox('sdk-cont-prompt');
    await crashDuringPrompt(sb, 'the trailing prompt');
    expect(userTexts(onlyLog(sb))).toEqual(['the trailing prompt']);

    const script = writeScript(sb, [{ text: 'answer to the trailing prompt' }]);
    const q = query({ options: sdkOptions(sb, script, { continue: true }) });
    const seen: SDKMessage[] = [];
    let answer;
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'system' && m.subtype === 'recovery') {
        expect(m).toMatchObject({ kind: 'interrupted_prompt', cause: 'crash', can_continue: true, action: 'awaiting_confirmation' });
        expect(m.continuation).toMatchObject({ mode: 'retry_user_parts', part_count: 1 });
        answer = await q.continueLastTurn({ planId: m.plan_id });
      }
      if (m.type === 'result') break;
    }
    expect(answer).toMatchObject({ accepted: true, interruption: 'interrupted_prompt', kind: 'interrupted_prompt' });
    expect(assistantText(seen)).toBe('answer to the trailing prompt');
    expect(seen.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'answer to the trailing prompt' });
    await expect(q.recovery).resolves.toMatchObject({ kind: 'interrupted_prompt' });

    // The log: the prompt is in exactly one user record, followed by the answer; the plan is clean now.
    const log = onlyLog(sb);
    expect(userTexts(log).filter((t) => t === 'the trailing prompt')).toHaveLength(1);
    expect(log.at(-1)).toMatchObject({ type: 'assistant' });
    expect(await planJson(sb)).toMatchObject({ kind: 'clean', canContinue: false });
  });

  it('continues an interrupted tool turn: every call id gets exactly one result', async () => {
    const sb = makeSandbox('sdk-cont-tool');
    writeFileSync(join(sb.cwd, 'a.txt'), 'alpha\n');
    writeFileSync(join(sb.cwd, 'b.txt'), 'beta\n');
    const script = writeScript(sb, [
      {
        text: 'Reading both files.',
        toolCalls: [
          { id: 'call_a', name: 'read_file', args: { file_path: join(sb.cwd, 'a.txt') } },
          { id: 'call_b', name: 'read_file', args: { file_path: join(sb.cwd, 'b.txt') } },
        ],
      },
      { text: 'Both files read; done.' },
    ]);
    // Crash right after the third record (user, assistant with calls, result of call_a) is durable.
    const crashed = query({
      prompt: 'read a and b',
      options: sdkOptions(sb, script, { env: { MEND_HOME: sb.home, HOME: sb.root, MEND_FAULT: 'kill-after-write:3' } }),
    });
    await expect(collect(crashed)).rejects.toMatchObject({ signal: 'SIGKILL' });
    expect(toolResultIds(onlyLog(sb))).toEqual(['call_a']);

    const q = query({ options: sdkOptions(sb, script, { continue: true }) });
    const seen: SDKMessage[] = [];
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'system' && m.subtype === 'recovery') {
        expect(m).toMatchObject({ kind: 'interrupted_turn', cause: 'crash', requires_user_confirmation: true });
        expect(m.repairs).toEqual([{ type: 'synthesized_tool_result', count: 1 }]);
        expect(m.continuation).toMatchObject({ mode: 'tool_result_parts', part_count: 2 });
        const plan = await q.getRecoveryPlan();
        expect(plan?.plan_id).toBe(m.plan_id);
        expect(await q.continueLastTurn({ planId: m.plan_id })).toMatchObject({ accepted: true, interruption: 'interrupted_turn', plan_id: m.plan_id });
      }
      if (m.type === 'result') break;
    }
    expect(seen.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Both files read; done.' });

    const log = onlyLog(sb);
    expect(toolResultIds(log).sort()).toEqual(['call_a', 'call_b']);
    const synthetic = log.find((r) => r.type === 'tool_result' && r.message.parts[0]?.functionResponse?.id === 'call_b');
    expect(synthetic).toMatchObject({ recovery: { synthetic: true } });
    expect(userTexts(log).filter((t) => t === 'read a and b')).toHaveLength(1);
    expect(await planJson(sb)).toMatchObject({ kind: 'clean' });
  });

  it('refuses a stale planId, then accepts the current one', async () => {
    const sb = makeSandbox('sdk-stale');
    await crashDuringPrompt(sb, 'stale test prompt');
    const q = query({ options: sdkOptions(sb, writeScript(sb, [{ text: 'ok' }]), { continue: true }) });
    try {
      const recovery = (await q.recovery)!;
      const stale = await q.continueLastTurn({ planId: 'rp_0000000000000000' });
      expect(stale).toMatchObject({ accepted: false, plan_id: recovery.plan_id, kind: 'interrupted_prompt' });
      expect(stale.reason).toMatch(/stale/);
      // Nothing ran: the log still ends with the prompt.
      expect(onlyLog(sb).at(-1)).toMatchObject({ type: 'user' });
      expect(await q.continueLastTurn({ planId: recovery.plan_id })).toMatchObject({ accepted: true });
      const result = await nextMatching(q, isResult);
      expect(result).toMatchObject({ subtype: 'success', result: 'ok' });
    } finally {
      await q.close();
    }
  });

  it('asks canUseTool: allow (with updated input) and deny', async () => {
    const sb = makeSandbox('sdk-approve');
    const a = join(sb.cwd, 'a.txt');
    const b = join(sb.cwd, 'b.txt');
    const script = writeScript(sb, [
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', args: { file_path: a, content: 'from the model' } },
          { id: 'w2', name: 'write_file', args: { file_path: b, content: 'never' } },
        ],
      },
      { text: 'wrote what I could' },
    ]);
    const asked: Array<[string, string, unknown]> = [];
    const q = query({
      prompt: 'write two files',
      options: sdkOptions(sb, script, {
        canUseTool: async (name, input, { toolUseId }) => {
          asked.push([name, toolUseId, input]);
          return toolUseId === 'w1' ? { behavior: 'allow', updatedInput: { ...input, content: 'from the host' } } : { behavior: 'deny', message: 'not b' };
        },
      }),
    });
    const messages = await collect(q);
    expect(asked).toEqual([
      ['write_file', 'w1', { file_path: a, content: 'from the model' }],
      ['write_file', 'w2', { file_path: b, content: 'never' }],
    ]);
    expect(readFileSync(a, 'utf8')).toBe('from the host');
    expect(existsSync(b)).toBe(false);
    const results = messages.flatMap((m) => (m.type === 'user' && Array.isArray(m.message.content) ? m.message.content : []));
    expect(results).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 'w1', is_error: false }),
      expect.objectContaining({ type: 'tool_result', tool_use_id: 'w2', is_error: true, content: expect.stringContaining('not b') }),
    ]);
    const result = messages.find(isResult)!;
    expect(result).toMatchObject({ subtype: 'success', result: 'wrote what I could' });
    expect(result.permission_denials).toEqual([expect.objectContaining({ tool_name: 'write_file', tool_use_id: 'w2' })]);
    // The denial is recorded as an error tool result.
    const denied = onlyLog(sb)
      .flatMap((r) => (r.type === 'tool_result' ? r.message.parts : []))
      .find((p) => p.functionResponse?.id === 'w2');
    expect(denied?.functionResponse?.response).toEqual({ error: expect.stringContaining('not b') });
  });

  it('interrupt() stops a streaming turn; the next turn runs in the same process', async () => {
    const sb = makeSandbox('sdk-interrupt');
    const script = writeScript(sb, [{ text: 'this never ends...', stallMs: 'forever' }, { text: 'after the interrupt' }]);
    const prompt = new Channel();
    const q = query({ prompt, options: sdkOptions(sb, script, { includePartialMessages: true }) });
    try {
      await nextMatching(q, (m) => m.type === 'system');
      const pid = pidOf(q);
      prompt.send('start streaming');
      await nextMatching(q, (m) => m.type === 'stream_event' && m.event.type === 'content_block_delta');
      await q.interrupt();
      const first = await nextMatching(q, isResult);
      expect(first).toMatchObject({ subtype: 'error_during_execution', is_error: true, error: { code: 'aborted' } });
      prompt.send('and now?');
      // The partial answer of the interrupted turn is in the log, so the model has seen one response: it plays the second.
      const second = await within(nextMatching(q, isResult), 10_000, 'the turn after the interrupt (replayed the stalling response?)');
      expect(second).toMatchObject({ subtype: 'success', result: 'after the interrupt' });
      expect(pidOf(q)).toBe(pid);
      prompt.end();
      expect(await collect(q)).toEqual([]);
    } finally {
      await q.close();
    }
  });

  it('reports malformed input lines as system errors and keeps the session going', async () => {
    const sb = makeSandbox('sdk-garbage');
    const transport = new ProcessTransport(sdkOptions(sb, writeScript(sb, [{ text: 'still here' }])));
    const q = new Query(transport);
    try {
      await nextMatching(q, (m) => m.type === 'system' && m.subtype === 'init');
      await transport.write('this is not json\n');
      await transport.write('{"type":"bogus"}\n');
      await transport.write('[1,2,3]\n');
      await transport.write('{"type":"user","message":{"role":"assistant"}}\n');
      const errors = [];
      for (let i = 0; i < 4; i++) errors.push(await nextMatching(q, (m) => m.type === 'system' && m.subtype === 'error'));
      expect(errors.map((e) => (e.type === 'system' && e.subtype === 'error' ? [e.error.code, e.error.line] : null))).toEqual([
        ['malformed_line', 1],
        ['unknown_type', 2],
        ['invalid_message', 3],
        ['invalid_message', 4],
      ]);
      // The malformed `user` line is a user message too: it gets its (error) result.
      expect(await nextMatching(q, isResult)).toMatchObject({ is_error: true, error: { code: 'invalid_message' } });
      await q.sendUserMessage({ type: 'user', message: { role: 'user', content: 'are you there?' } });
      expect(await nextMatching(q, isResult)).toMatchObject({ subtype: 'success', result: 'still here' });
    } finally {
      await q.close();
    }
    await expect(transport.exited).resolves.toMatchObject({ exitCode: 0 });
  });

  it('a CLI that fails at start-up: the error result, then MendProcessError; recovery rejects', async () => {
    const sb = makeSandbox('sdk-nosession');
    const q = query({ prompt: 'hello?', options: sdkOptions(sb, undefined, { continue: true }) });
    const seen: SDKMessage[] = [];
    const error = await (async () => {
      for await (const m of q) seen.push(m);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([expect.objectContaining({ type: 'result', is_error: true, error: expect.objectContaining({ code: 'no_session_to_continue' }) })]);
    expect(error).toBeInstanceOf(MendProcessError);
    expect(error).toMatchObject({ exitCode: 3 });
    await expect(q.recovery).rejects.toBeInstanceOf(MendProcessError);
  });

  it('setModel and setPermissionMode are answered', async () => {
    const sb = makeSandbox('sdk-settings');
    const q = query({ options: sdkOptions(sb, writeScript(sb, [{ text: 'x' }])) });
    try {
      await q.setPermissionMode('plan');
      await q.setModel('another-model');
      await expect(q.setPermissionMode('nonsense' as never)).rejects.toMatchObject({ code: 'invalid_request' });
    } finally {
      await q.close();
    }
  });

  it('leaves no process behind when the consumer breaks out early (idle and mid-turn)', async () => {
    const sb = makeSandbox('sdk-break');
    const idle = query({ options: sdkOptions(sb) });
    let pid = 0;
    for await (const m of idle) {
      pid = pidOf(idle);
      if (m.type === 'system') break;
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);

    const script = writeScript(sb, [{ text: 'stalling...', stallMs: 'forever' }]);
    const busy = query({ prompt: 'stall', options: sdkOptions(sb, script, { includePartialMessages: true }) });
    for await (const m of busy) {
      pid = pidOf(busy);
      if (m.type === 'stream_event') break;
    }
    await waitFor(() => !alive(pid), 2000, 'the CLI to exit');
    expect(alive(pid)).toBe(false);
  });
});
