/**
 * buildSessionRecoveryPlan against the readable reference implementation of the plan
 * rules (test/support/reference-plan.ts): on every corpus case and on generated
 * sessions (thought-only and empty entries, reused call ids with other names, results
 * inside model entries, empty leftovers, abort / failure / recovery markers, subagent
 * records, a live writer). Kind, cause, lastError, repairs, apiHistory, continuation
 * and previousAttempts must be equal.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSessionRecoveryPlan } from '../../src/recovery/build-plan.js';
import type { BuildPlanInput, SessionRecoveryPlan } from '../../src/recovery/plan-types.js';
import { validateProviderHistory } from '../../src/recovery/validate-history.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { loadSession } from '../../src/session/session-loader.js';
import { historyArb, sessionRecordsArb } from '../support/arbitraries.js';
import { copyCase, listCorpus, removeCopies } from '../support/corpus.js';

import { conversationOf, readOf } from '../support/history.js';
import { referencePlan, type ReferencePlan } from '../support/reference-plan.js';

afterAll(removeCopies);

/** The fields the reference covers, taken from a real plan. */
function comparable(plan: SessionRecoveryPlan): ReferencePlan {
  return {
    kind: plan.kind,
    cause: plan.cause,
    lastError: plan.lastError,
    repairs: plan.repairs,
    apiHistory: plan.apiHistory,
    continuation: plan.continuation
      ? { mode: plan.continuation.mode, parts: plan.continuation.parts, syntheticCallIds: plan.continuation.syntheticCallIds }
      : null,
    previousAttempts: plan.previousAttempts,
  };
}

const writerArb = fc.option(fc.constant({ store: 'jsonl', host: 'devbox', pid: 4242, since: '2026-01-01T00:00:00.000Z' }), { nil: undefined, freq: 5 });

describe('buildSessionRecoveryPlan equals the reference plan', () => {
  it.each(listCorpus().map((c) => [c.name, c] as const))('corpus: %s', async (_name, c) => {
    const loaded = await loadSession(copyCase(c).sessionPath);
    const input: BuildPlanInput = {
      sessionId: loaded.conversation.sessionId,
      conversation: loaded.conversation,
      historyGaps: loaded.historyGaps,
      diagnostics: loaded.diagnostics,
    };
    expect(comparable(buildSessionRecoveryPlan(input))).toEqual(referencePlan(input));
  });

  it('generated sessions (markers, thought-only and empty entries, subagent records, a live writer)', () => {
    fc.assert(
      fc.property(sessionRecordsArb, writerArb, (records, writer) => {
        const loaded = buildConversation(readOf(records));
        const input: BuildPlanInput = {
          sessionId: loaded.conversation.sessionId,
          conversation: loaded.conversation,
          historyGaps: loaded.historyGaps,
          diagnostics: loaded.diagnostics,
          ...(writer ? { activeWriter: writer } : {}),
        };
        const plan = buildSessionRecoveryPlan(input);
        expect(comparable(plan)).toEqual(referencePlan(input));
        expect(validateProviderHistory(plan.apiHistory)).toEqual({ ok: true });
        // Subagent records never reach the main history.
        expect(plan.sidechainRecords).toBe(records.filter((r) => (r as { isSidechain?: boolean }).isSidechain === true).length);
      }),
      { numRuns: 1500 },
    );
  });

  it('generated histories (ids colliding across entries and names, calls and results in one part)', () => {
    fc.assert(
      fc.property(historyArb, fc.boolean(), (history, writtenByMend) => {
        const input: BuildPlanInput = { sessionId: 's', conversation: conversationOf(history, { writtenByMend }) };
        expect(comparable(buildSessionRecoveryPlan(input))).toEqual(referencePlan(input));
      }),
      { numRuns: 1500 },
    );
  });
});

// ---- reader rules, through real files: what a line cannot change -----------------------------

const scratch = mkdtempSync(join(tmpdir(), 'mend-reference-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function planOfLines(lines: string[]): Promise<SessionRecoveryPlan> {
  const path = join(scratch, 'session.jsonl');
  writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
  const loaded = await loadSession(path);
  return buildSessionRecoveryPlan({
    sessionId: loaded.conversation.sessionId,
    conversation: loaded.conversation,
    historyGaps: loaded.historyGaps,
    diagnostics: loaded.diagnostics,
  });
}

/** The plan without what reading damage adds to it (diagnostics and their sentences). */
function withoutReport(plan: SessionRecoveryPlan): Omit<SessionRecoveryPlan, 'diagnostics' | 'visibleNotice'> {
  const { diagnostics: _d, visibleNotice: _n, ...rest } = plan;
  return rest;
}

const nonEmptySessionArb = sessionRecordsArb.filter((records) => records.length > 0);

describe('reader rules never change the plan of the session', () => {
  it('a line repeated right after itself is one record (item 8)', async () => {
    await fc.assert(
      fc.asyncProperty(nonEmptySessionArb, fc.nat(), async (records, n) => {
        const lines = records.map((r) => JSON.stringify(r));
        const at = n % lines.length;
        const repeated = [...lines.slice(0, at + 1), lines[at]!, ...lines.slice(at + 1)];
        const plan = await planOfLines(repeated);
        expect(withoutReport(plan)).toEqual(withoutReport(await planOfLines(lines)));
        expect(plan.diagnostics.map((d) => d.code)).toContain('repeated_line');
      }),
      { numRuns: 200 },
    );
  });

  it('one foreign line anywhere does not hide the session (item 5)', async () => {
    const foreignArb = fc.record({ text: fc.string({ maxLength: 5 }), parent: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(
        nonEmptySessionArb.filter((r) => r.length >= 2),
        fc.nat(),
        foreignArb,
        async (records, n, f) => {
          const lines = records.map((r) => JSON.stringify(r));
          const foreign = JSON.stringify({
            uuid: 'foreign-1',
            parentUuid: f.parent ? 'r0' : null,
            sessionId: '99999999-8888-4777-8666-555555555555',
            timestamp: '2026-01-01T00:00:00.000Z',
            type: 'user',
            message: { role: 'user', parts: [{ text: f.text }] },
          });
          const at = n % (lines.length + 1);
          const plan = await planOfLines([...lines.slice(0, at), foreign, ...lines.slice(at)]);
          expect(withoutReport(plan)).toEqual(withoutReport(await planOfLines(lines)));
          expect(plan.diagnostics.map((d) => d.code)).toContain('mixed_session_id');
        },
      ),
      { numRuns: 200 },
    );
  });
});
