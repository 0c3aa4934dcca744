/**
 * The wing's one case suite (src/session/outline/README.md): every HistoryReader, and the
 * outline reader with its line scanner off too, gives what the reference (the full
 * reader) gives, on every corpus session and on generated logs (shuffled, duplicated and
 * fragmented lines, garbage, torn tails, branches, gaps, cycles, checkpoints, sidechains,
 * markers, thought-only and empty entries, reused call ids): the same plan and loaded
 * session (without their histories, as plain values), the same read facts and
 * diagnostics, the same index entries, and the same full records read back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../../src/recovery/build-plan.js';
import { planFromOutline } from '../../../src/runtime/outline-plan.js';
import { buildConversation } from '../../../src/session/conversation-loader.js';
import { readSessionBytes, type ReadOptions } from '../../../src/session/log-reader.js';
import { historyReaders, indexRecords, type HistoryReader, type HistoryReadOptions } from '../../../src/session/outline/history-reader.js';
import type { ChatRecord, Content } from '../../../src/session/records.js';
import { damagedLogArb, garbageLineArb, joinLines, sessionRecordsArb } from '../../support/arbitraries.js';
import { listCorpus } from '../../support/corpus.js';

const corpus = listCorpus().map((c) => ({ name: c.name, bytes: readFileSync(join(c.dir, 'session.jsonl')) }));
const writer = { store: 'jsonl' as const, host: 'devbox', pid: 4242, since: '2026-01-01T00:00:00.000Z' };

/** Every reader, and the outline reader with the line scanner off (MEND_OUTLINE_SCAN=0). */
const cases: Array<{ name: string; reader: HistoryReader; options: HistoryReadOptions }> = historyReaders.flatMap((reader) =>
  reader.name === 'outline'
    ? [
        { name: 'outline', reader, options: {} },
        { name: 'outline, scanner off', reader, options: { scan: false } },
      ]
    : [{ name: reader.name, reader, options: {} }],
);

async function expectSameAsReference(
  reader: HistoryReader,
  readerOptions: HistoryReadOptions,
  bytes: Buffer,
  options: ReadOptions = {},
  allowAutoContinue = false,
  activeWriter: typeof writer | null = null,
): Promise<void> {
  const build = options.fileSessionId !== undefined ? { fallbackSessionId: options.fileSessionId } : {};
  const read = await readSessionBytes(bytes, options);
  const fullLoaded = buildConversation(read, build);
  const { apiHistory, originalApiHistory: _original, ...fullHead } = buildPlanForSession(fullLoaded, { allowAutoContinue }, activeWriter);
  const { records: _chain, ...fullConversation } = fullLoaded.conversation;

  const outline = await reader.readBytes(bytes, { ...readerOptions, ...options });
  const { records: _records, ...facts } = read;
  expect(outline.read).toEqual(facts);
  expect(outline.indexEntries()).toEqual(indexRecords(read).entries);
  expect(outline.source.full(Array.from({ length: outline.source.count }, (_, i) => i))).toEqual(read.records.map((r) => r.record));

  const { loaded, plan } = planFromOutline(outline, build, { allowAutoContinue }, activeWriter);
  // Plain values: exactly the full plan and session without their histories and records.
  expect(plan).toEqual(fullHead);
  expect(loaded).toEqual({ ...fullLoaded, conversation: fullConversation });
  expect(plan.apiEntryCount).toBe(apiHistory.length);
  expect(Object.values(Object.getOwnPropertyDescriptors(plan)).every((d) => 'value' in d)).toBe(true);
}

for (const { name, reader, options: readerOptions } of cases) {
  const expectSamePlan = (bytes: Buffer, options: ReadOptions = {}, allowAutoContinue = false, activeWriter: typeof writer | null = null) =>
    expectSameAsReference(reader, readerOptions, bytes, options, allowAutoContinue, activeWriter);

  describe(`${name} reader equals the reference`, () => {
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
      const { plan } = planFromOutline(await reader.readBytes(bytes, readerOptions), {}, {}, null);
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
        { numRuns: 400 },
      );
    });

    it('property: shuffled, duplicated and torn corpus logs', async () => {
      const logArb = damagedLogArb(corpus.map((c) => c.bytes));
      await fc.assert(
        fc.asyncProperty(logArb, async ({ bytes, chunkSize }) => {
          await expectSamePlan(bytes, { chunkSize });
        }),
        { numRuns: 150 },
      );
    });
  });
}
