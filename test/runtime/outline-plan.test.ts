/**
 * A plan built from a session's outline (issue 11: the columns of the outline pass,
 * the tail read back whole, the histories on demand) is the plan a full load builds:
 * on every corpus session and on generated logs (shuffled, duplicated and fragmented
 * lines, garbage, torn tails, branches, gaps, cycles, checkpoints, sidechains, markers,
 * thought-only and empty entries, reused call ids). Checked before anything reads a
 * history (the summary a recovery line shows, without the full records), and after
 * (the histories and records read back on demand equal the full load's).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../src/recovery/build-plan.js';
import { apiEntryCount } from '../../src/recovery/plan-facts.js';
import type { SessionRecoveryPlan } from '../../src/recovery/plan-types.js';
import { planFromOutline } from '../../src/runtime/outline-plan.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { lastCwd, recordedCwd } from '../../src/session/conversation-facts.js';
import type { LoadedSession } from '../../src/session/conversation.js';
import { readSessionBytes, type ReadOptions } from '../../src/session/log-reader.js';
import { outlineBytes } from '../../src/session/outline/outline-reader.js';
import type { ChatRecord, Content } from '../../src/session/records.js';
import { damagedLogArb, garbageLineArb, joinLines, sessionRecordsArb } from '../support/arbitraries.js';
import { listCorpus } from '../support/corpus.js';

const corpus = listCorpus().map((c) => ({ name: c.name, bytes: readFileSync(join(c.dir, 'session.jsonl')) }));
const writer = { store: 'jsonl' as const, host: 'devbox', pid: 4242, since: '2026-01-01T00:00:00.000Z' };

/** Everything of a plan but its histories, read without touching them. */
function summaryOf(plan: SessionRecoveryPlan): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(plan)) if (key !== 'apiHistory' && key !== 'originalApiHistory') out[key] = plan[key as keyof SessionRecoveryPlan];
  return out;
}

function conversationSummary(loaded: LoadedSession): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(loaded.conversation)) if (key !== 'records') out[key] = loaded.conversation[key as keyof LoadedSession['conversation']];
  return { conversation: out, historyGaps: loaded.historyGaps, diagnostics: loaded.diagnostics };
}

async function expectSamePlan(bytes: Buffer, options: ReadOptions = {}, allowAutoContinue = false, activeWriter: typeof writer | null = null): Promise<void> {
  const build = options.fileSessionId !== undefined ? { fallbackSessionId: options.fileSessionId } : {};
  const fullLoaded = buildConversation(await readSessionBytes(bytes, options), build);
  const fullPlan = buildPlanForSession(fullLoaded, { allowAutoContinue }, activeWriter);

  const { loaded, plan } = planFromOutline(await outlineBytes(bytes, options), build, { allowAutoContinue }, activeWriter);
  // What a recovery line shows, before any history is produced.
  expect(summaryOf(plan)).toEqual(summaryOf(fullPlan));
  expect(conversationSummary(loaded)).toEqual(conversationSummary(fullLoaded));
  expect(apiEntryCount(plan)).toBe(fullPlan.apiHistory.length);
  expect(recordedCwd(loaded.conversation)).toBe(lastCwd(fullLoaded.conversation.records));
  // Then the histories and records, read back on demand.
  expect(plan).toEqual(fullPlan);
  expect(loaded).toEqual(fullLoaded);
}

describe('planFromOutline equals the plan of a full load', () => {
  for (const c of corpus) {
    it(`corpus: ${c.name}`, async () => {
      await expectSamePlan(c.bytes);
      await expectSamePlan(c.bytes, { chunkSize: 7 }, true, writer);
      const id = /"sessionId":"([^"]+)"/.exec(c.bytes.toString('utf8'))?.[1];
      if (id !== undefined) await expectSamePlan(c.bytes, { fileSessionId: id });
    });
  }

  it('a last model entry the repair drops (a call without an id): the continuation reaches back before it', async () => {
    const S = '11111111-2222-4333-8444-555555555555';
    const base = { sessionId: S, timestamp: '2026-01-01T00:00:00.000Z', version: 'mend/0.1.0' };
    const records = [
      { ...base, uuid: 'a', parentUuid: null, type: 'user', message: { role: 'user', parts: [{ text: 'first question' }] } },
      { ...base, uuid: 'b', parentUuid: 'a', type: 'assistant', message: { role: 'model', parts: [{ text: 'an answer' }] } },
      { ...base, uuid: 'c', parentUuid: 'b', type: 'user', message: { role: 'user', parts: [{ text: 'second question' }] } },
      { ...base, uuid: 'd', parentUuid: 'c', type: 'assistant', message: { role: 'model', parts: [{ functionCall: { name: 'read_file', args: {} } }] } },
      { ...base, uuid: 'e', parentUuid: 'd', type: 'user', message: { role: 'user', parts: [{ text: 'third question' }] } },
    ];
    const bytes = Buffer.from(`${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
    await expectSamePlan(bytes);
    const { plan } = planFromOutline(await outlineBytes(bytes), {}, {}, null);
    expect(plan.continuation?.displayText).toBe('second question\nthird question');
  });

  it('property: generated sessions, as written and damaged', async () => {
    const compressionArb = fc.oneof(
      fc.constant<Content[]>([
        { role: 'user', parts: [{ text: 'summary' }] },
        { role: 'model', parts: [{ text: 'ok' }] },
      ]),
      fc.constant('not a history'),
    );
    const logArb = sessionRecordsArb.chain((records) =>
      fc
        .record({
          records: fc.constant(records),
          compression: fc.option(fc.tuple(fc.nat(), compressionArb)),
          relink: fc.option(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('parent', 'missing', 'self'))),
          cwd: fc.option(fc.tuple(fc.nat(), fc.constantFrom('/work/a', '/work/b'))),
          order: fc.array(fc.nat(), { maxLength: 3 }),
          dups: fc.array(fc.nat(), { maxLength: 3 }),
          fragment: fc.option(fc.nat()),
          garbage: fc.option(fc.tuple(fc.nat(), garbageLineArb)),
          cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { freq: 4 }),
          chunkSize: fc.constantFrom(1, 5, 64, 1 << 16),
          auto: fc.boolean(),
          live: fc.boolean(),
        })
        .map((g) => {
          const recs: ChatRecord[] = g.records.map((r) => ({ ...r }));
          if (recs.length > 0 && g.compression) {
            const at = g.compression[0] % recs.length;
            const prev = recs[at - 1];
            recs.splice(at, 0, {
              uuid: `cp${at}`,
              parentUuid: prev?.uuid ?? null,
              sessionId: recs[0]!.sessionId,
              timestamp: '2026-01-01T00:00:00.000Z',
              type: 'system',
              subtype: 'chat_compression',
              systemPayload: { compressedHistory: g.compression[1] },
            } as ChatRecord);
            if (recs[at + 1]) recs[at + 1] = { ...recs[at + 1]!, parentUuid: `cp${at}` };
          }
          if (recs.length > 0 && g.relink) {
            const child = recs[g.relink[0] % recs.length]!;
            const target = recs[g.relink[1] % recs.length]!;
            child.parentUuid = g.relink[2] === 'missing' ? 'gone' : g.relink[2] === 'self' ? child.uuid : target.uuid;
          }
          if (recs.length > 0 && g.cwd) (recs[g.cwd[0] % recs.length] as { cwd?: string }).cwd = g.cwd[1];
          const lines: Buffer[] = recs.map((r) => Buffer.from(JSON.stringify(r)));
          if (lines.length > 0 && g.fragment !== null) {
            // A later piece of one record (a fragment), as a writer that splits records does.
            const r = recs[g.fragment % recs.length]!;
            if (r.type !== 'system') lines.push(Buffer.from(JSON.stringify({ ...r, message: { ...r.message, parts: [{ text: 'more' }] } })));
          }
          for (const i of g.order) {
            if (lines.length < 2) break;
            const a = i % lines.length;
            const b = (a + 1) % lines.length;
            [lines[a], lines[b]] = [lines[b]!, lines[a]!];
          }
          for (const i of g.dups) if (lines.length > 0) lines.push(lines[i % lines.length]!);
          if (lines.length > 0 && g.garbage) lines[g.garbage[0] % lines.length] = g.garbage[1];
          let bytes = joinLines(lines, true);
          if (g.cut !== null) bytes = bytes.subarray(0, Math.floor(g.cut * bytes.length));
          return { bytes, chunkSize: g.chunkSize, auto: g.auto, live: g.live };
        }),
    );
    await fc.assert(
      fc.asyncProperty(logArb, async ({ bytes, chunkSize, auto, live }) => {
        await expectSamePlan(bytes, { chunkSize }, auto, live ? writer : null);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: shuffled, duplicated and torn corpus logs', async () => {
    const logArb = damagedLogArb(corpus.map((c) => c.bytes));
    await fc.assert(
      fc.asyncProperty(logArb, async ({ bytes, chunkSize }) => {
        await expectSamePlan(bytes, { chunkSize });
      }),
      { numRuns: 200 },
    );
  });
});
