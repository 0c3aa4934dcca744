/**
 * The crash corpus through the pure core: read + load + plan, compared with each
 * case's expected.json. Later entrypoints (CLI, SDK) are compared with this. Then the
 * same through every reader of the outline wing (the outline pass with its line scanner
 * on and off, as MEND_OUTLINE_SCAN switches it), planned without the histories as a
 * resume that only shows its recovery line is: the same plan, as a plain value.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { buildPlanForSession, buildSessionRecoveryPlan, validateProviderHistory } from '../../src/recovery/index.js';
import { planFromOutline } from '../../src/runtime/outline-plan.js';
import { historyReaders } from '../../src/session/outline/history-reader.js';
import { loadSession } from '../../src/session/session-loader.js';
import { planProblems } from '../support/fuzz-worker.js';
import { copyCase, expandSynthetic, listCorpus, removeCopies } from '../support/corpus.js';

afterAll(removeCopies);

const cases = listCorpus();

describe('crash corpus through the core', () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    expect(c.expected, `${c.name} has no expected.json`).not.toBeNull();
    const expected = c.expected!;
    const { sessionPath } = copyCase(c);
    const loaded = await loadSession(sessionPath);
    const sessionId = loaded.conversation.sessionId;
    const input = { sessionId, conversation: loaded.conversation, historyGaps: loaded.historyGaps, diagnostics: loaded.diagnostics };
    const plan = buildSessionRecoveryPlan(input);
    const optIn = buildSessionRecoveryPlan({ ...input, options: { allowAutoContinue: true } });

    expect(plan.kind).toBe(expected.kind);
    expect(plan.cause).toBe(expected.cause);
    expect(plan.repairs).toEqual(expected.repairs);
    expect({
      canContinue: plan.canContinue,
      canAutoContinue: plan.canAutoContinue,
      requiresUserConfirmation: plan.requiresUserConfirmation,
    }).toEqual({
      canContinue: expected.canContinue,
      canAutoContinue: expected.canAutoContinue,
      requiresUserConfirmation: expected.requiresUserConfirmation,
    });
    expect(optIn.canAutoContinue).toBe(expected.canAutoContinueWithOptIn);
    expect(optIn.planId).toBe(plan.planId);
    expect(plan.previousAttempts).toBe(expected.previousAttempts);
    expect(plan.diagnostics.map((d) => d.code)).toEqual(expected.diagnostics);
    expect(plan.apiHistory).toHaveLength(expected.apiEntries);
    expect(plan.sidechainRecords).toBe(expected.sidechainRecords ?? 0);
    expect(plan.lastError).toEqual(expected.lastError ?? null);
    // Nothing in the corpus is being written by another process while it is planned.
    expect(plan.activeWriter).toBeNull();

    if (expected.continuation === null) {
      expect(plan.continuation).toBeUndefined();
    } else {
      expect(plan.continuation?.mode).toBe(expected.continuation.mode);
      expect(plan.continuation?.parts).toEqual(expandSynthetic(expected.continuation.parts));
    }
    for (const phrase of expected.noticeIncludes) expect(plan.visibleNotice ?? '').toContain(phrase);
    if (plan.kind === 'clean' && plan.repairs.length === 0 && plan.cause === 'none' && plan.diagnostics.length === 0 && plan.sidechainRecords === 0) {
      expect(plan.visibleNotice).toBeUndefined();
    }

    // Whatever the kind, what gets sent is provider-safe.
    expect(validateProviderHistory(plan.apiHistory)).toEqual({ ok: true });
    // Same input, same plan; and the plan oracle of the fuzzers (continuation = exactly what
    // follows the last model entry of apiHistory, so it reaches the model once; policy invariants).
    expect(buildSessionRecoveryPlan(input)).toEqual(plan);
    expect(planProblems(plan, buildSessionRecoveryPlan(input))).toEqual([]);
  });
});

const readerCases = historyReaders.flatMap((reader) =>
  reader.name === 'outline'
    ? [
        { name: 'outline reader, line scanner on', reader, scan: true },
        { name: 'outline reader, line scanner off (MEND_OUTLINE_SCAN=0)', reader, scan: false },
      ]
    : [{ name: 'full reader', reader, scan: true }],
);

describe.each(readerCases)('crash corpus through the $name', ({ reader, scan }) => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const expected = c.expected!;
    const { sessionPath } = copyCase(c);
    const full = buildPlanForSession(await loadSession(sessionPath));
    // As loadSession reads it: the copy's name (session.jsonl) names no session.
    const { plan } = planFromOutline(await reader.read(sessionPath, { scan }), {}, {}, null);
    expect(plan.kind).toBe(expected.kind);
    expect(plan.cause).toBe(expected.cause);
    expect(plan.repairs).toEqual(expected.repairs);
    expect(plan.diagnostics.map((d) => d.code)).toEqual(expected.diagnostics);
    expect(plan.apiEntryCount).toBe(expected.apiEntries);
    if (expected.continuation === null) expect(plan.continuation).toBeUndefined();
    else expect(plan.continuation?.parts).toEqual(expandSynthetic(expected.continuation.parts));
    const { apiHistory: _api, originalApiHistory: _original, ...head } = full;
    expect(plan).toEqual(head);
  });
});
