/**
 * SessionRuntime in process: opening, the one policy, continuations decided and
 * queued atomically, the lease, and the domain events front ends consume.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../src/runtime/session-runtime.js';
import { SessionRuntime } from '../../src/runtime/session-runtime.js';
import { cleanupSandboxes, readLog } from '../support/cli.js';
import { defaultSettings, runtimeFixture } from '../support/runtime.js';

afterAll(cleanupSandboxes);

const DANGLING = '38dff1b0-3406-4c0b-a5f4-8df5d96853fc';

function eventTypes(events: RuntimeEvent[]): string[] {
  return events
    .map((e) => e.type)
    .filter((t) => !['text_delta', 'thought_delta', 'tool_input_delta', 'message_start', 'message_end', 'tool_input_start'].includes(t));
}

describe('SessionRuntime', () => {
  it('a new session: one prompt records the turn and emits domain events in order', async () => {
    const fx = runtimeFixture([{ text: 'Hello there.' }]);
    const runtime = await SessionRuntime.open(fx.deps, { target: { type: 'new' }, access: 'write', settings: defaultSettings });
    const events: RuntimeEvent[] = [];
    runtime.subscribe((e) => events.push(e));
    const outcome = await runtime.prompt([{ text: 'hi' }]);
    expect(outcome).toMatchObject({ status: 'success', text: 'Hello there.', numTurns: 1 });
    expect(eventTypes(events)).toEqual(['turn_started', 'user_prompt', 'assistant_message', 'turn_finished']);
    expect(events.some((e) => e.type === 'text_delta')).toBe(true);
    const log = join(fx.chats, `${runtime.sessionId}.jsonl`);
    expect(existsSync(`${log}.lock`)).toBe(true);
    await runtime.close();
    expect(existsSync(`${log}.lock`)).toBe(false);
    expect(readLog(log).map((r) => r.type)).toEqual(['user', 'assistant']);
  });

  it('opened with histories on demand: the plan is a plain value without them; loadHistory reads them by an explicit call', async () => {
    const fx = runtimeFixture([]);
    fx.install('dangling-single-call', DANGLING);
    const target = { type: 'resume' as const, target: DANGLING };
    const whole = await SessionRuntime.open(fx.deps, { target, access: 'inspect', settings: defaultSettings });
    const full = await whole.loadHistory();
    const runtime = await SessionRuntime.open(fx.deps, { target, access: 'inspect', histories: 'on_demand', settings: defaultSettings });
    const head = runtime.recoveryPlan!;
    expect(Object.keys(head)).not.toContain('apiHistory');
    expect(Object.keys(runtime.loadedSession!.conversation)).not.toContain('records');
    const { apiHistory, originalApiHistory: _original, ...expected } = full!.plan;
    expect(head).toEqual(expected);
    expect(head.apiEntryCount).toBe(apiHistory.length);
    expect(runtime.loadedSession!.conversation.recordedCwd).toBe(full!.loaded.conversation.recordedCwd);
    const loaded = await runtime.loadHistory();
    expect(loaded).toEqual(full);
    // Now held: the runtime's plan carries its histories.
    expect(runtime.recoveryPlan).toBe(loaded!.plan);
    await runtime.close();
    await whole.close();
  });

  it('continues an interrupted turn once: synthetic result written once, the tool is not run, a second continue has nothing to do', async () => {
    const fx = runtimeFixture([{}, {}, { text: 'I will check before retrying.' }]);
    fx.install('dangling-single-call', DANGLING);
    const runtime = await SessionRuntime.open(fx.deps, { target: { type: 'resume', target: DANGLING }, access: 'write', settings: defaultSettings });
    expect(runtime.recoveryPlan?.kind).toBe('interrupted_turn');
    const events: RuntimeEvent[] = [];
    runtime.subscribe((e) => events.push(e));
    const answer = await runtime.continueLastTurn({ planId: runtime.recoveryPlan!.planId });
    expect(answer.accepted).toBe(true);
    if (!answer.accepted) return;
    expect(await answer.outcome).toMatchObject({ status: 'success', text: 'I will check before retrying.' });
    expect(eventTypes(events)).toEqual(['recovery_plan', 'turn_started', 'recovery_results', 'assistant_message', 'turn_finished']);
    expect(events.some((e) => e.type === 'tool_call_started')).toBe(false);
    const again = await runtime.continueLastTurn();
    expect(again).toMatchObject({ accepted: false, code: 'nothing_to_continue' });
    await runtime.close();
    const records = readLog(join(fx.chats, `${DANGLING}.jsonl`));
    const synthetic = records.filter((r) => r.type === 'tool_result' && (r as { recovery?: unknown }).recovery !== undefined);
    expect(synthetic).toHaveLength(1);
    expect(records.filter((r) => r.type === 'system' && r.subtype === 'recovery')).toHaveLength(1);
  });

  it('two continues requested together: exactly one is accepted, the other is refused turn_running', async () => {
    const fx = runtimeFixture([{}, {}, { text: 'done' }, { text: 'again' }]);
    fx.install('dangling-single-call', DANGLING);
    const runtime = await SessionRuntime.open(fx.deps, { target: { type: 'resume', target: DANGLING }, access: 'write', settings: defaultSettings });
    const [a, b] = await Promise.all([runtime.continueLastTurn(), runtime.continueLastTurn()]);
    expect([a.accepted, b.accepted]).toEqual([true, false]);
    expect(b).toMatchObject({ code: 'turn_running' });
    if (a.accepted) await a.outcome;
    await runtime.close();
    const records = readLog(join(fx.chats, `${DANGLING}.jsonl`));
    expect(records.filter((r) => r.type === 'system' && r.subtype === 'recovery')).toHaveLength(1);
  });

  it('refuses a stale plan id, and a degraded history, with codes from the one union', async () => {
    const fx = runtimeFixture([]);
    fx.install('dangling-single-call', DANGLING);
    const runtime = await SessionRuntime.open(fx.deps, { target: { type: 'resume', target: DANGLING }, access: 'write', settings: defaultSettings });
    expect(await runtime.continueLastTurn({ planId: 'rp_0000000000000000' })).toMatchObject({ accepted: false, code: 'stale_plan' });
    await runtime.close();

    const gap = 'aaaaaaaa-1111-4222-8333-444444444444';
    fx.install('history-gap-middle', gap);
    const degraded = await SessionRuntime.open(fx.deps, { target: { type: 'resume', target: gap }, access: 'write', settings: defaultSettings });
    expect(degraded.recoveryPlan?.kind).toBe('degraded_history');
    expect(await degraded.continueLastTurn()).toMatchObject({ accepted: false, code: 'continuation_refused' });
    expect(await degraded.prompt([{ text: 'go on' }])).toMatchObject({ status: 'error', error: { code: 'degraded_history' } });
    await degraded.close();
  });

  it('inspecting takes no lease, writes nothing, and reports a live writer; continuing it is refused session_locked', async () => {
    const fx = runtimeFixture([]);
    fx.install('dangling-single-call', DANGLING);
    const log = join(fx.chats, `${DANGLING}.jsonl`);
    const before = readFileSync(log);
    const writer = await SessionRuntime.open(fx.deps, { target: { type: 'resume', target: DANGLING }, access: 'write', settings: defaultSettings });
    const reader = await SessionRuntime.open(fx.deps, { target: { type: 'latest' }, access: 'inspect', settings: defaultSettings });
    expect(reader.writable).toBe(false);
    expect(reader.activeWriter).toMatchObject({ store: 'jsonl', host: 'test-host', pid: process.pid });
    expect(await reader.continueLastTurn()).toMatchObject({ accepted: false, code: 'session_locked' });
    await reader.close();
    await writer.close();
    expect(readFileSync(log).equals(before)).toBe(true);
    await expect(
      SessionRuntime.open(fx.deps, { target: { type: 'resume', target: DANGLING }, access: 'write', settings: defaultSettings }).then((r) => r.close()),
    ).resolves.toBeUndefined();
  });

  it('a second writer is refused with session_locked naming the holder', async () => {
    const fx = runtimeFixture([]);
    fx.install('dangling-single-call', DANGLING);
    const first = await SessionRuntime.open(fx.deps, { target: { type: 'resume', target: DANGLING }, access: 'write', settings: defaultSettings });
    await expect(
      SessionRuntime.open(fx.deps, { target: { type: 'resume', target: DANGLING }, access: 'write', settings: defaultSettings }),
    ).rejects.toMatchObject({
      code: 'session_locked',
      details: { pid: process.pid, host: 'test-host' },
    });
    await first.close();
  });

  it('close() waits for queued turns before releasing the lease', async () => {
    const fx = runtimeFixture([{ text: 'one', delayMs: 5, chunkSize: 1 }, { text: 'two' }]);
    const runtime = await SessionRuntime.open(fx.deps, { target: { type: 'new' }, access: 'write', settings: defaultSettings });
    const first = runtime.prompt([{ text: 'a' }]);
    const second = runtime.prompt([{ text: 'b' }]);
    const log = join(fx.chats, `${runtime.sessionId}.jsonl`);
    await runtime.close();
    expect((await first).status).toBe('success');
    expect((await second).status).toBe('success');
    expect(existsSync(`${log}.lock`)).toBe(false);
    expect(readLog(log).map((r) => r.type)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });
});
