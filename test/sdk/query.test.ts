/** Query against an in-memory transport: routing, control requests, permissions, lifecycle. */
import { describe, expect, it } from 'vitest';
import { MendAbortError, MendControlError, MendProcessError, Query, validationIssues, type SDKMessage, type SDKUserMessageInput } from '../../src/sdk/index.js';
import { assistantLine, FakeTransport, initLine, recoveryLine, resultLine, summary, tick } from './fake-transport.js';

async function collect(q: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const out: SDKMessage[] = [];
  for await (const m of q) out.push(m);
  return out;
}

const userMessages = (t: FakeTransport) => t.written.filter((m) => m['type'] === 'user');

describe('Query', () => {
  it('sends a string prompt as one user message and ends stdin after its result', async () => {
    const t = new FakeTransport();
    const q = new Query(t, { prompt: 'hello' });
    const all = collect(q);
    const user = await t.nextWrite((m) => m['type'] === 'user');
    expect(user).toEqual({ type: 'user', session_id: '', message: { role: 'user', content: 'hello' }, parent_tool_use_id: null });
    t.emit(initLine(false));
    t.emit(assistantLine('hi'));
    expect(t.inputEnded).toBe(false);
    t.emit(resultLine('hi'));
    await tick();
    expect(t.inputEnded).toBe(true);
    t.exit({ exitCode: 0, signal: null, closedByHost: false });
    const messages = await all;
    expect(messages.map((m) => m.type)).toEqual(['system', 'assistant', 'result']);
    await expect(q.recovery).resolves.toBeNull();
    expect(t.written.some((m) => m['type'] === 'control_request')).toBe(false);
  });

  it('streams an async iterable prompt and ends stdin only when every turn has its result', async () => {
    const t = new FakeTransport();
    async function* prompt(): AsyncGenerator<SDKUserMessageInput> {
      yield { type: 'user', message: { role: 'user', content: 'one' } };
      yield { type: 'user', message: { role: 'user', content: 'two' } };
    }
    const q = new Query(t, { prompt: prompt() });
    const all = collect(q);
    await t.nextWrite((m) => (m['message'] as { content?: string } | undefined)?.content === 'two');
    t.emit(initLine(false));
    t.emit(resultLine('1'));
    await tick();
    expect(t.inputEnded).toBe(false);
    t.emit(resultLine('2'));
    await tick();
    expect(t.inputEnded).toBe(true);
    expect(userMessages(t)).toHaveLength(2);
    t.exit({ exitCode: 0, signal: null, closedByHost: false });
    expect((await all).filter((m) => m.type === 'result')).toHaveLength(2);
  });

  it('resolves recovery with the recovery line and continues from inside the loop', async () => {
    const t = new FakeTransport();
    async function* none(): AsyncGenerator<SDKUserMessageInput> {}
    const q = new Query(t, { prompt: none() });
    t.emit(initLine(true));
    t.emit(recoveryLine());
    const seen: string[] = [];
    let answer: unknown;
    let inputEndedBeforeExit = false;
    for await (const m of q) {
      seen.push(m.type === 'system' ? `system/${m.subtype}` : m.type);
      if (m.type === 'system' && m.subtype === 'recovery') {
        const pending = q.continueLastTurn({ planId: m.plan_id });
        const req = await t.controlRequest('continue_last_turn');
        expect(req['request']).toEqual({ subtype: 'continue_last_turn', plan_id: 'rp_abc' });
        t.succeed(req, { accepted: true, interruption: 'interrupted_turn', plan_id: 'rp_abc', kind: 'interrupted_turn' });
        answer = await pending;
        // The continuation's turn is expected: stdin stays open until its result.
        await tick();
        expect(t.inputEnded).toBe(false);
        t.emit(assistantLine('continued'));
        t.emit(resultLine('continued'));
      }
      if (m.type === 'result') {
        // Once the consumer asks for more, stdin ends; the CLI then exits.
        expect(t.inputEnded).toBe(false);
        setTimeout(() => {
          inputEndedBeforeExit = t.inputEnded;
          t.exit({ exitCode: 0, signal: null, closedByHost: false });
        }, 10);
      }
    }
    expect(inputEndedBeforeExit).toBe(true);
    expect(seen).toEqual(['system/init', 'system/recovery', 'assistant', 'result']);
    expect(answer).toMatchObject({ accepted: true, plan_id: 'rp_abc' });
    await expect(q.recovery).resolves.toMatchObject({ subtype: 'recovery', plan_id: 'rp_abc', kind: 'interrupted_turn' });
  });

  it('keeps stdin open while the consumer has not read the last result', async () => {
    const t = new FakeTransport();
    const q = new Query(t, { prompt: 'hello' });
    await t.nextWrite((m) => m['type'] === 'user');
    t.emit(initLine(false));
    t.emit(resultLine('hi'));
    await tick(10);
    expect(t.inputEnded).toBe(false);
    expect((await q.next()).value).toMatchObject({ subtype: 'init' });
    expect((await q.next()).value).toMatchObject({ type: 'result' });
    expect(t.inputEnded).toBe(false);
    const end = q.next();
    expect(t.inputEnded).toBe(true);
    t.exit({ exitCode: 0, signal: null, closedByHost: false });
    await expect(end).resolves.toMatchObject({ done: true });
  });

  it('turns an error answer into MendControlError with the CLI code', async () => {
    const t = new FakeTransport();
    const q = new Query(t);
    const pending = q.continueLastTurn({ planId: 'rp_old' });
    t.fail(await t.controlRequest('continue_last_turn'), 'plan rp_old is stale', 'stale_plan');
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MendControlError);
    expect(error).toMatchObject({ code: 'stale_plan', subtype: 'continue_last_turn' });
    await q.close();
  });

  it('rejects a malformed continue_last_turn answer', async () => {
    const t = new FakeTransport();
    const q = new Query(t);
    const pending = q.continueLastTurn();
    t.succeed(await t.controlRequest('continue_last_turn'), { accepted: 'yes' });
    await expect(pending).rejects.toMatchObject({ code: 'invalid_response' });
    await q.close();
  });

  it('sends set_permission_mode, set_model, interrupt and get_recovery_plan', async () => {
    const t = new FakeTransport();
    const q = new Query(t);
    const a = q.setPermissionMode('yolo');
    t.succeed(await t.controlRequest('set_permission_mode'));
    await a;
    const b = q.setModel('m2');
    t.succeed(await t.controlRequest('set_model'));
    await b;
    const c = q.interrupt();
    t.succeed(await t.controlRequest('interrupt'));
    await c;
    const d = q.getRecoveryPlan();
    t.succeed(await t.controlRequest('get_recovery_plan'), summary());
    await expect(d).resolves.toMatchObject({ plan_id: 'rp_abc', kind: 'interrupted_turn' });
    const requests = t.written.map((m) => m['request']);
    expect(requests).toEqual([
      { subtype: 'set_permission_mode', mode: 'yolo' },
      { subtype: 'set_model', model: 'm2' },
      { subtype: 'interrupt' },
      { subtype: 'get_recovery_plan' },
    ]);
    // Ids are unique.
    expect(new Set(t.written.map((m) => m['request_id'])).size).toBe(4);
    // An invalid mode is refused before anything is written.
    await expect(q.setPermissionMode('bogus' as never)).rejects.toMatchObject({ code: 'invalid_request' });
    expect(t.written).toHaveLength(4);
    await q.close();
  });

  it('asks canUseTool: initialize first, then allow / deny / throw / cancel', async () => {
    const t = new FakeTransport();
    const calls: Array<{ name: string; input: unknown; id: string }> = [];
    let cancelledSignal: AbortSignal | undefined;
    const q = new Query(t, {
      prompt: 'go',
      canUseTool: async (name, input, { toolUseId, signal }) => {
        calls.push({ name, input, id: toolUseId });
        if (name === 'write_file') return { behavior: 'allow', updatedInput: { ...input, content: 'changed' } };
        if (name === 'run_shell_command') return { behavior: 'deny', message: 'no shell' };
        if (name === 'edit') throw new Error('boom');
        cancelledSignal = signal;
        return new Promise(() => {});
      },
    });
    const init = await t.controlRequest('initialize');
    const firstUser = t.written.findIndex((m) => m['type'] === 'user');
    expect(t.written.indexOf(init)).toBeLessThan(firstUser === -1 ? Infinity : firstUser);
    t.succeed(init, { capabilities: {}, session_id: 's', recovery: null });
    const ask = (id: string, tool: string) =>
      t.emit({
        type: 'control_request',
        request_id: id,
        request: { subtype: 'can_use_tool', tool_name: tool, tool_use_id: `tu_${id}`, input: { file_path: '/x' } },
      });
    const answerTo = (id: string) => t.nextWrite((m) => m['type'] === 'control_response' && (m['response'] as { request_id?: string }).request_id === id);
    ask('c1', 'write_file');
    expect((await answerTo('c1'))['response']).toEqual({
      subtype: 'success',
      request_id: 'c1',
      response: { behavior: 'allow', updatedInput: { file_path: '/x', content: 'changed' } },
    });
    ask('c2', 'run_shell_command');
    expect((await answerTo('c2'))['response']).toEqual({ subtype: 'success', request_id: 'c2', response: { behavior: 'deny', message: 'no shell' } });
    ask('c3', 'edit');
    expect((await answerTo('c3'))['response']).toMatchObject({ subtype: 'error', request_id: 'c3', code: 'callback_failed' });
    ask('c4', 'list_directory');
    await tick();
    t.emit({ type: 'control_cancel_request', request_id: 'c4' });
    await tick();
    expect(cancelledSignal?.aborted).toBe(true);
    expect(t.written.some((m) => (m['response'] as { request_id?: string } | undefined)?.request_id === 'c4')).toBe(false);
    expect(calls.map((c) => c.id)).toEqual(['tu_c1', 'tu_c2', 'tu_c3', 'tu_c4']);
    // Unknown CLI request subtypes get an error answer, not silence.
    t.emit({ type: 'control_request', request_id: 'x1', request: { subtype: 'mystery' } });
    expect((await answerTo('x1'))['response']).toMatchObject({ subtype: 'error', code: 'unsupported_request' });
    await q.close();
  });

  it('denies can_use_tool when there is no callback', async () => {
    const t = new FakeTransport();
    const q = new Query(t);
    t.emit({ type: 'control_request', request_id: 'c1', request: { subtype: 'can_use_tool', tool_name: 'edit', tool_use_id: 'tu', input: {} } });
    const answer = await t.nextWrite((m) => m['type'] === 'control_response');
    expect(answer['response']).toMatchObject({ subtype: 'success', response: { behavior: 'deny' } });
    await q.close();
  });

  it('passes unknown types through untouched and flags invalid known ones', async () => {
    const t = new FakeTransport();
    const q = new Query(t);
    t.emit(initLine(false));
    t.emit({ type: 'telemetry', value: 1 });
    t.emit({ type: 'system', subtype: 'compact_boundary', uuid: 'u', session_id: 's' });
    t.emit({ type: 'assistant', uuid: 'u', session_id: 's' });
    t.exit({ exitCode: 0, signal: null, closedByHost: false });
    const messages = (await collect(q)) as unknown as Array<Record<string, unknown>>;
    expect(messages.slice(1)).toEqual([
      { type: 'telemetry', value: 1 },
      { type: 'system', subtype: 'compact_boundary', uuid: 'u', session_id: 's' },
      { type: 'assistant', uuid: 'u', session_id: 's' },
    ]);
    expect(validationIssues(messages[0]!)).toBeUndefined();
    expect(validationIssues(messages[1]!)).toBeUndefined();
    expect(validationIssues(messages[2]!)).toBeUndefined();
    expect(validationIssues(messages[3]!)).toMatch(/message|parent_tool_use_id/);
  });

  it('yields what was read, then throws the process error; pending requests and recovery reject', async () => {
    const t = new FakeTransport();
    const q = new Query(t);
    const pending = q.getRecoveryPlan();
    await t.controlRequest('get_recovery_plan');
    t.emit(resultLine('x', { subtype: 'error_during_execution', is_error: true, error: { code: 'session_locked', message: 'locked' } }));
    const failure = new MendProcessError('the mend CLI exited with code 3', 3, null, 'locked\n');
    t.exit({ exitCode: 3, signal: null, closedByHost: false }, failure);
    const seen: string[] = [];
    const error = await (async () => {
      for await (const m of q) seen.push(m.type);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['result']);
    // The exit is told in the CLI's own words: its error result's code, still a MendProcessError.
    expect(error).toBeInstanceOf(MendProcessError);
    expect(error).toMatchObject({ name: 'MendCliError', code: 'session_locked', message: 'locked', exitCode: 3, cause: failure });
    await expect(pending).rejects.toMatchObject({ code: 'session_locked' });
    await expect(q.recovery).rejects.toMatchObject({ code: 'session_locked' });
  });

  it('closes the transport when the consumer breaks out of the loop', async () => {
    const t = new FakeTransport();
    const q = new Query(t);
    t.emit(initLine(false));
    t.emit(assistantLine('a'));
    for await (const m of q) {
      if (m.type === 'system') break;
    }
    expect(t.closed).toBe(true);
    await expect(q.next()).resolves.toMatchObject({ done: true });
  });

  it('aborts through abortSignal: transport closed, iterator throws AbortError', async () => {
    const t = new FakeTransport();
    const ac = new AbortController();
    const q = new Query(t, { abortSignal: ac.signal });
    t.emit(initLine(false));
    const first = await q.next();
    expect(first.done).toBe(false);
    ac.abort();
    const error = await q.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MendAbortError);
    expect((error as Error).name).toBe('AbortError');
    expect(t.closed).toBe(true);
  });

  it('never starts when the signal is already aborted', async () => {
    const t = new FakeTransport();
    const ac = new AbortController();
    ac.abort();
    const q = new Query(t, { abortSignal: ac.signal, prompt: 'x' });
    await expect(q.next()).rejects.toBeInstanceOf(MendAbortError);
    await expect(q.recovery).rejects.toBeInstanceOf(MendAbortError);
    expect(t.started).toBe(false);
  });

  it('a prompt iterable that throws stops the CLI and surfaces its error', async () => {
    const t = new FakeTransport();
    const boom = new Error('prompt source failed');
    async function* prompt(): AsyncGenerator<SDKUserMessageInput> {
      yield { type: 'user', message: { role: 'user', content: 'one' } };
      throw boom;
    }
    const q = new Query(t, { prompt: prompt() });
    await expect(collect(q)).rejects.toBe(boom);
    expect(t.closed).toBe(true);
    expect(userMessages(t)).toHaveLength(1);
  });

  it('an invalid user message from the prompt is an error, not a line', async () => {
    const t = new FakeTransport();
    async function* prompt(): AsyncGenerator<SDKUserMessageInput> {
      yield { type: 'user', message: { role: 'assistant', content: 'x' } } as never;
    }
    const q = new Query(t, { prompt: prompt() });
    await expect(collect(q)).rejects.toThrow(/role|user/);
    expect(userMessages(t)).toHaveLength(0);
  });

  it('a prompt that cannot be written (CLI gone) leaves the exit to the reader', async () => {
    const t = new FakeTransport();
    t.endInput();
    const q = new Query(t, { prompt: 'hello' });
    await tick(10);
    const failure = new MendProcessError('the mend CLI exited with code 2', 2, null, '');
    t.exit({ exitCode: 2, signal: null, closedByHost: false }, failure);
    await expect(collect(q)).rejects.toBe(failure);
  });

  it('refuses control requests after close', async () => {
    const t = new FakeTransport();
    const q = new Query(t);
    await q.close();
    await expect(q.interrupt()).rejects.toMatchObject({ code: 'closed' });
    await expect(q.recovery).rejects.toMatchObject({ code: 'exited_before_init' });
  });
});
