/**
 * The index pass (readSessionIndex) gives exactly what indexing a full read gives:
 * the same entries (fragments merged), the same diagnostics in the same order, the
 * same session, on every corpus session and on damaged, shuffled, duplicated and
 * truncated variants, at block sizes that cut lines and characters anywhere.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readSessionIndex } from '../../src/session/outline-reader.js';
import { readSessionLog, type ReadOptions } from '../../src/session/log-reader.js';
import { indexRecords } from '../../src/session/record-index.js';
import { garbageLineArb, joinLines, splitLines } from '../support/arbitraries.js';
import { listCorpus } from '../support/corpus.js';

const corpus = listCorpus().map((c) => ({ name: c.name, bytes: readFileSync(join(c.dir, 'session.jsonl')) }));
const scratch = mkdtempSync(join(tmpdir(), 'mend-index-reader-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function expectSameIndex(bytes: Buffer, options: ReadOptions = {}): Promise<void> {
  const file = join(scratch, 'session.jsonl');
  writeFileSync(file, bytes);
  const full = await readSessionLog(file, options);
  const index = await readSessionIndex(file, options);
  expect({ sessionId: index.sessionId, entries: index.entries, diagnostics: index.diagnostics }).toEqual(indexRecords(full));
  expect([index.bytes, index.lines]).toEqual([full.bytes, full.lines]);
}

describe('readSessionIndex', () => {
  for (const c of corpus) {
    it(`equals indexRecords(readSessionLog) on ${c.name}`, async () => {
      await expectSameIndex(c.bytes);
      await expectSameIndex(c.bytes, { chunkSize: 7 });
      const id = /"sessionId":"([^"]+)"/.exec(c.bytes.toString('utf8'))?.[1];
      if (id !== undefined) await expectSameIndex(c.bytes, { fileSessionId: id });
    });
  }

  it('property: damaged, shuffled, duplicated and truncated corpus logs index like a full read', async () => {
    const caseArb = fc.constantFrom(...corpus.filter((c) => c.bytes.length > 0));
    const logArb = caseArb.chain((c) => {
      const { lines, finalNewline } = splitLines(c.bytes);
      return fc
        .record({
          order: fc.shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length }),
          dups: fc.array(fc.nat({ max: lines.length - 1 }), { maxLength: 3 }),
          garbage: fc.option(fc.tuple(fc.nat(), garbageLineArb)),
          cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
          chunkSize: fc.constantFrom(1, 5, 64, 4096, 1 << 16),
          shuffle: fc.boolean(),
        })
        .map(({ order, dups, garbage, cut, chunkSize, shuffle }) => {
          const picked = shuffle ? [...order] : [...lines];
          for (const i of dups) picked.push(picked[i % picked.length]!);
          if (garbage) picked[garbage[0] % picked.length] = garbage[1];
          let bytes = joinLines(picked, finalNewline);
          if (cut !== null) bytes = bytes.subarray(0, Math.floor(cut * bytes.length));
          return { bytes, chunkSize };
        });
    });
    await fc.assert(
      fc.asyncProperty(logArb, async ({ bytes, chunkSize }) => {
        await expectSameIndex(bytes, { chunkSize });
      }),
      { numRuns: 300 },
    );
  });
});
