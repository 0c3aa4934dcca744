import { describe, expect, it } from 'vitest';
import { buildSessionRecoveryPlan, PLAN_ID_PATTERN, toRecoveryDebugPayload } from '../../src/recovery/index.js';
import type { Content } from '../../src/session/records.js';
import { call, conversationOf, model, result, text, user } from '../support/history.js';

const SID = '11111111-2222-3333-4444-555555555555';
const plan = (history: Content[], opts: Parameters<typeof conversationOf>[1] = {}, allowAutoContinue = false) =>
  buildSessionRecoveryPlan({ sessionId: SID, conversation: conversationOf(history, opts), options: { allowAutoContinue } });

describe('classification happens before repair', () => {
  it('a dangling call is interrupted_turn although apiHistory closes it', () => {
    const p = plan([user(text('run it')), model(call('c1'))]);
    expect(p.kind).toBe('interrupted_turn');
    expect(p.originalApiHistory).toEqual([user(text('run it')), model(call('c1'))]);
    expect(p.apiHistory).toHaveLength(3);
    expect(p.continuation?.mode).toBe('tool_result_parts');
    expect(p.continuation?.syntheticCallIds).toEqual(['c1']);
  });

  it('trailing results of the last call are an interrupted prompt; results of older calls are not', () => {
    expect(plan([user(text('x')), model(call('c1')), user(result('c1'))]).kind).toBe('interrupted_prompt');
    const hoistOnly = plan([model(call('c1')), model(text('done')), user(result('c1'))]);
    expect(hoistOnly.kind).toBe('clean');
    expect(hoistOnly.repairs).toEqual([{ type: 'hoisted_tool_result', callId: 'c1', name: 'run_shell_command' }]);
  });

  it('no model entry at all: a lone prompt is interrupted_prompt, nothing is clean', () => {
    expect(plan([user(text('hello'))]).kind).toBe('interrupted_prompt');
    expect(plan([]).kind).toBe('clean');
  });
});

describe('policy', () => {
  it.each([
    // history, opts, optIn, canContinue, canAuto, needsConfirm
    ['clean', [user(text('a')), model(text('b'))], {}, true, false, false, false],
    ['prompt, default', [user(text('a'))], {}, false, true, false, true],
    ['prompt, opt-in', [user(text('a'))], {}, true, true, true, false],
    ['turn, default', [model(call('c'))], {}, false, true, false, true],
    ['turn, opt-in', [model(call('c'))], {}, true, true, true, false],
    ['turn, opt-in, aborted', [model(call('c'))], { aborted: 'sigint' as const }, true, true, false, true],
    ['prompt, opt-in, earlier attempt', [user(text('a'))], { attempts: 1 }, true, true, false, true],
  ])('%s', (_n, history, opts, optIn, canContinue, canAuto, confirm) => {
    const p = plan(history as Content[], opts, optIn);
    expect([p.canContinue, p.canAutoContinue, p.requiresUserConfirmation]).toEqual([canContinue, canAuto, confirm]);
  });

  it('degraded history never continues, even with the opt-in', () => {
    const conversation = conversationOf([user(text('a'))]);
    const p = buildSessionRecoveryPlan({
      sessionId: SID,
      conversation,
      historyGaps: [{ childUuid: 'r0', missingParentUuid: 'gone', beforeCheckpoint: false }],
      options: { allowAutoContinue: true },
    });
    expect(p.kind).toBe('degraded_history');
    expect([p.canContinue, p.canAutoContinue, p.requiresUserConfirmation]).toEqual([false, false, false]);
    expect(p.continuation).toBeUndefined();
    expect(p.repairs[0]).toEqual({ type: 'history_gap', childUuid: 'r0', missingParentUuid: 'gone' });
    expect(p.visibleNotice).toContain('1 history gap');
  });

  it('a gap before a compression checkpoint does not degrade', () => {
    const p = buildSessionRecoveryPlan({
      sessionId: SID,
      conversation: conversationOf([user(text('a')), model(text('b'))]),
      historyGaps: [{ childUuid: 'x', missingParentUuid: 'y', beforeCheckpoint: true }],
    });
    expect(p.kind).toBe('clean');
    expect(p.repairs).toEqual([]);
  });
});

describe('cause', () => {
  it.each([
    ['complete tail', [user(text('a')), model(text('b'))], {}, 'none'],
    ['mend crash', [model(call('c'))], {}, 'crash'],
    ['foreign writer', [model(call('c'))], { writtenByMend: false }, 'unknown'],
    ['abort marker', [model(call('c'))], { aborted: 'sigterm' as const }, 'aborted'],
    ['abort after partial text', [user(text('a')), model(text('par'))], { aborted: 'sigint' as const }, 'aborted'],
  ])('%s', (_n, history, opts, cause) => {
    expect(plan(history as Content[], opts).cause).toBe(cause);
  });

  it('an aborted turn reads differently from a crash', () => {
    const crash = plan([model(call('c'))]).visibleNotice ?? '';
    const aborted = plan([model(call('c'))], { aborted: 'sigint' }).visibleNotice ?? '';
    expect(crash).toContain('crashed');
    expect(aborted).toContain('aborted (sigint)');
    expect(aborted).not.toContain('crashed');
    expect(crash).toContain('1 unfinished tool call');
  });
});

describe('continuation reaches the model exactly once', () => {
  const histories: Array<[string, Content[]]> = [
    ['dangling calls, one recorded, then user text', [user(text('go')), model(call('a'), call('b')), user(result('a')), user(text('also this'))]],
    ['trailing results and text', [user(text('go')), model(call('a')), user(result('a')), user(text('hurry'))]],
    ['lone prompt', [user(text('only'))]],
  ];

  it.each(histories)('%s', (_n, history) => {
    const p = plan(history);
    const cont = p.continuation!;
    expect(cont).toBeDefined();
    const count = (sent: Content[], needle: (s: string) => boolean) => sent.flatMap((c) => c.parts).filter((part) => needle(JSON.stringify(part))).length;

    // Executing the continuation sends apiHistory as it is; a new prompt appends one entry.
    for (const sent of [p.apiHistory, [...p.apiHistory, user(text('new prompt'))]]) {
      for (const part of cont.parts) {
        const json = JSON.stringify(part);
        expect(count(sent, (s) => s === json)).toBe(1);
      }
      for (const id of ['a', 'b']) {
        const calls = count(sent, (s) => s.includes(`"functionCall":{"id":"${id}"`));
        const results = count(sent, (s) => s.includes(`"functionResponse":{"id":"${id}"`));
        expect(results).toBe(calls);
      }
    }
    // The parts are exactly the tail of apiHistory after its last model entry.
    const lastModel = p.apiHistory.map((c) => c.role).lastIndexOf('model');
    expect(p.apiHistory.slice(lastModel + 1).flatMap((c) => c.parts)).toEqual(cont.parts);
  });

  it('tool_result_parts keeps recorded results, synthesizes the missing ones, in call order, then user text', () => {
    const p = plan([user(text('go')), model(call('a'), call('b'), call('c')), user(result('b', 'run_shell_command', 'B')), user(text('note'))]);
    const parts = p.continuation!.parts;
    expect(parts.map((x) => x.functionResponse?.id ?? x.text)).toEqual(['a', 'b', 'c', 'note']);
    expect(parts[1]).toEqual(result('b', 'run_shell_command', 'B'));
    expect(p.continuation!.syntheticCallIds).toEqual(['a', 'c']);
  });

  it('a recorded result is never marked failed because an earlier call of the same id was synthesized (call_0 numbering)', () => {
    // The first call_0 is answered by nothing (its result answers the later call_0).
    const p = plan([user(text('go')), model(call('call_0')), user(text('and then')), model(call('call_0')), user(result('call_0', 'run_shell_command', 'R'))]);
    expect(p.repairs).toEqual([{ type: 'synthesized_tool_result', callId: 'call_0', name: 'run_shell_command' }]);
    expect(p.continuation!.parts).toEqual([result('call_0', 'run_shell_command', 'R')]);
    expect(p.continuation!.syntheticCallIds).toEqual([]);
    expect(p.continuation!.displayText).toBe('1 tool result');
  });
});

describe('planId', () => {
  it('has the documented format, is stable, and differs when the tail differs', () => {
    const a = plan([user(text('a')), model(call('c1'))]);
    expect(a.planId).toMatch(PLAN_ID_PATTERN);
    expect(plan([user(text('a')), model(call('c1'))]).planId).toBe(a.planId);
    expect(plan([user(text('a')), model(call('c2'))]).planId).not.toBe(a.planId);
    // Same length, different state: Qwen's sessionId:length would collide here.
    const clean = plan([user(text('a')), model(text('b'))]);
    expect(clean.planId).not.toBe(a.planId);
  });
});

describe('previous attempts and the debug payload', () => {
  it('counts recovery records after the last model entry and blocks auto-continue', () => {
    const p = plan([model(call('c'))], { attempts: 2 }, true);
    expect(p.previousAttempts).toBe(2);
    expect(p.canAutoContinue).toBe(false);
    expect(p.visibleNotice).toContain('2 earlier recovery attempts');
  });

  it('toRecoveryDebugPayload carries id, kind, repairs and the given timestamp', () => {
    const p = plan([model(call('c'))]);
    expect(toRecoveryDebugPayload(p, '2026-11-30T00:00:00.000Z')).toEqual({
      planId: p.planId,
      kind: 'interrupted_turn',
      repairs: [{ type: 'synthesized_tool_result', callId: 'c', name: 'run_shell_command' }],
      timestamp: '2026-11-30T00:00:00.000Z',
    });
  });
});

describe('a live session (activeWriter) is running, not crashed', () => {
  const writer = { store: 'jsonl', host: 'build-7', pid: 31337, since: '2026-03-01T10:00:00.000Z' };

  it('cause running, nothing can continue, the notice names the holder; the kind still comes from the tail', () => {
    const history = [user(text('run it')), model(call('c1'))];
    const p = buildSessionRecoveryPlan({ sessionId: SID, conversation: conversationOf(history), activeWriter: writer, options: { allowAutoContinue: true } });
    expect(p.kind).toBe('interrupted_turn');
    expect(p.cause).toBe('running');
    expect({ canContinue: p.canContinue, canAutoContinue: p.canAutoContinue, requiresUserConfirmation: p.requiresUserConfirmation }).toEqual({
      canContinue: false,
      canAutoContinue: false,
      requiresUserConfirmation: false,
    });
    expect(p.activeWriter).toEqual(writer);
    expect(p.visibleNotice).toContain('in use by build-7 pid 31337 since 2026-03-01T10:00:00.000Z');
    // Its call may still be running: nothing is called failed or unfinished.
    expect(p.visibleNotice).toContain('1 tool call without a recorded result yet (c1)');
    expect(p.visibleNotice).not.toMatch(/marked as failed|session crashed/);
  });

  it('the lease epoch is carried and named; the plan is a pure function of the holder', () => {
    const input = {
      sessionId: SID,
      conversation: conversationOf([user(text('a')), model(text('b'))]),
      activeWriter: { ...writer, store: 'postgres', epoch: 12 },
    };
    const p = buildSessionRecoveryPlan(input);
    expect(p.kind).toBe('clean');
    expect(p.cause).toBe('running');
    expect(p.activeWriter?.epoch).toBe(12);
    expect(p.visibleNotice).toContain('lease epoch 12');
    expect(buildSessionRecoveryPlan(input)).toEqual(p);
    expect(buildSessionRecoveryPlan({ ...input, activeWriter: null }).activeWriter).toBeNull();
  });
});

describe('a failed run (turn_failed) is not a crash', () => {
  const failedConversation = (history: Content[]) => {
    const conversation = conversationOf(history);
    conversation.afterLastModel.turnFailed = [{ uuid: 'tf', code: 'max_turns', message: 'stopped after 20 turns' }];
    conversation.afterLastModel.endedBy = { subtype: 'turn_failed', uuid: 'tf' };
    return conversation;
  };

  it('cause failed with lastError; confirmation needed, never auto-continued, the notice names the error', () => {
    const p = buildSessionRecoveryPlan({
      sessionId: SID,
      conversation: failedConversation([user(text('x')), model(call('c1')), user(result('c1'))]),
      options: { allowAutoContinue: true },
    });
    expect(p.kind).toBe('interrupted_prompt');
    expect(p.cause).toBe('failed');
    expect(p.lastError).toEqual({ code: 'max_turns', message: 'stopped after 20 turns' });
    expect(p.canContinue).toBe(true);
    expect(p.canAutoContinue).toBe(false);
    expect(p.requiresUserConfirmation).toBe(true);
    expect(p.visibleNotice).toContain('max_turns: stopped after 20 turns');
  });

  it('a marker the tail went past (endedBy null) says nothing: the new prompt crashed', () => {
    const conversation = failedConversation([user(text('x')), model(text('partial')), user(text('again'))]);
    conversation.afterLastModel.endedBy = null;
    const p = buildSessionRecoveryPlan({ sessionId: SID, conversation });
    expect(p.cause).toBe('crash');
    expect(p.lastError).toBeNull();
  });
});

describe('worst cases stay cheap', () => {
  it('a notice over a turn of many unfinished calls names ten and counts the rest', () => {
    const calls = Array.from({ length: 25 }, (_, i) => call(`c${i}`));
    const p = plan([user(text('go')), model(...calls)]);
    expect(p.visibleNotice).toContain('25 unfinished tool calls (c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 and 15 more)');
    expect(p.continuation?.syntheticCallIds).toHaveLength(25);
  });
});
