/**
 * The foreign corpus through the readers and the one planner: each case's file,
 * recognised from its content, translated, loaded and planned exactly as a mend
 * session is, compared with its expected.json (agent, version, kind, cause, plan id...).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readForeign } from '../../src/foreign/registry.js';
import { foreignReadResult } from '../../src/foreign/to-read-result.js';
import { buildPlanForSession, validateProviderHistory } from '../../src/recovery/index.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { expandSynthetic } from '../support/corpus.js';
import { listForeignCorpus } from '../support/foreign-corpus.js';

const cases = listForeignCorpus(true);

describe('foreign corpus through the readers and the core', () => {
  it('has every agent', () => {
    expect(new Set(cases.map((c) => c.expected.agent))).toEqual(
      new Set(['claude', 'codex', 'gemini'].filter((a) => cases.some((c) => c.expected.agent === a))),
    );
    expect(cases.length).toBeGreaterThanOrEqual(9);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const expected = c.expected;
    const bytes = readFileSync(join(c.dir, c.file));
    const session = readForeign(bytes);
    expect(session?.agent).toBe(expected.agent);
    expect(session?.agentVersion).toBe(expected.agentVersion);
    const read = await foreignReadResult(session!);
    const build = session!.sessionId ? { fallbackSessionId: session!.sessionId } : {};
    const loaded = buildConversation(read, build);
    const plan = buildPlanForSession(loaded, { allowAutoContinue: false }, null);
    const optIn = buildPlanForSession(buildConversation(read, build), { allowAutoContinue: true }, null);

    expect(plan.planId).toBe(expected.planId);
    expect(plan.kind).toBe(expected.kind);
    expect(plan.cause).toBe(expected.cause);
    expect(plan.repairs).toEqual(expected.repairs);
    expect({ canContinue: plan.canContinue, canAutoContinue: plan.canAutoContinue, requiresUserConfirmation: plan.requiresUserConfirmation }).toEqual({
      canContinue: expected.canContinue,
      canAutoContinue: expected.canAutoContinue,
      requiresUserConfirmation: expected.requiresUserConfirmation,
    });
    expect(optIn.canAutoContinue).toBe(expected.canAutoContinueWithOptIn);
    expect(plan.previousAttempts).toBe(expected.previousAttempts);
    expect(plan.diagnostics.map((d) => d.code)).toEqual(expected.diagnostics);
    expect(plan.apiHistory).toHaveLength(expected.apiEntries);
    expect(plan.sidechainRecords).toBe(expected.sidechainRecords ?? 0);
    if (expected.continuation === null) expect(plan.continuation).toBeUndefined();
    else {
      expect(plan.continuation?.mode).toBe(expected.continuation.mode);
      expect(plan.continuation?.parts).toEqual(expandSynthetic(expected.continuation.parts));
    }
    for (const phrase of expected.noticeIncludes) expect(plan.visibleNotice ?? '').toContain(phrase);
    expect(validateProviderHistory(plan.apiHistory)).toEqual({ ok: true });
    // The owner's call ids are the plan's.
    for (const r of plan.repairs) if ('callId' in r) expect(bytes.toString('utf8')).toContain(r.callId);
  });
});
