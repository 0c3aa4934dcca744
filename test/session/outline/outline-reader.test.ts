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
import { readSessionIndex } from '../../../src/session/outline/outline-reader.js';
import { readSessionLog, type ReadOptions } from '../../../src/session/log-reader.js';
import { indexRecords } from '../../../src/session/record-index.js';
import { damagedLogArb } from '../../support/arbitraries.js';
import { listCorpus } from '../../support/corpus.js';

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
    const logArb = damagedLogArb(corpus.map((c) => c.bytes));
    await fc.assert(
      fc.asyncProperty(logArb, async ({ bytes, chunkSize }) => {
        await expectSameIndex(bytes, { chunkSize });
      }),
      { numRuns: 300 },
    );
  });
});
