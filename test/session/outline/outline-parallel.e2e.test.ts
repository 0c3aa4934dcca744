/**
 * The outline pass on two threads (a large log's lines parsed by the main
 * thread from the front and a worker from the back) gives exactly the outline of one
 * pass: the same records, columns, parts, diagnostics and counts, and so the same plan,
 * on every corpus session and on damaged, shuffled, duplicated and truncated logs, with
 * chunks down to one byte (lines cut anywhere, a chunk without a line start, a byte
 * order mark and CRLF endings, torn tails). A worker that fails at start or dies after
 * taking chunks changes nothing but the time: the main thread reads the rest itself.
 * The worker is the built one (dist/, made by `npm run build` before the tests): one that
 * compiled the sources itself took 10 s idle and over 30 s on a loaded machine.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { planFromOutline } from '../../../src/runtime/outline-plan.js';
import { parallelPass, readsInParallel, type WorkerJob } from '../../../src/session/outline/outline-parallel.js';
import type { SessionOutline } from '../../../src/session/outline/history-reader.js';
import { readSessionOutline } from '../../../src/session/outline/outline-reader.js';
import { damagedLogArb } from '../../support/arbitraries.js';
import { listCorpus } from '../../support/corpus.js';
import { builtOutlineWorker, dyingWorker, failingWorker } from '../../support/outline-worker.js';

const corpus = listCorpus().map((c) => ({ name: c.name, bytes: readFileSync(join(c.dir, 'session.jsonl')) }));
const scratch = mkdtempSync(join(tmpdir(), 'mend-outline-parallel-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Everything an outline answers, record by record, and the plan built on it. */
function described(outline: SessionOutline): unknown {
  const { source } = outline;
  const records = [];
  for (let i = 0; i < source.count; i++) {
    records.push({
      uuid: source.uuid(i),
      parentUuid: source.parentUuid(i),
      isParentOfPrevious: i > 0 ? source.isParent(i, i - 1) : null,
      lastLine: source.lastLine(i),
      type: source.type(i),
      compression: source.isCompression(i),
      sidechain: source.isSidechain(i),
      model: source.isModel(i),
      provenance: source.provenance(i),
      parts: outline.outlineParts(i),
      partCount: outline.partCount(i),
      keepsModelEntry: outline.keepsModelEntry(i),
      cwd: outline.cwd(i),
    });
  }
  const full = source.full([...Array(source.count).keys()]);
  const { plan } = planFromOutline(outline, {}, {}, null);
  return { read: outline.read, records, full, entries: outline.indexEntries(), plan };
}

let files = 0;

async function expectSameOutline(bytes: Buffer, chunkBytes: number, spawn: (job: WorkerJob) => Worker = builtOutlineWorker): Promise<void> {
  const file = join(scratch, `session-${files++}.jsonl`);
  writeFileSync(file, bytes);
  try {
    const one = await readSessionOutline(file, { parallel: false });
    const two = await readSessionOutline(file, { parallel: { chunkBytes, minBytes: 0, spawn, startTogether: true } });
    expect(described(two)).toEqual(described(one));
  } finally {
    rmSync(file, { force: true });
  }
}

describe('the outline pass on two threads', () => {
  it('is used for logs from 16 MiB to 256 MiB by default, or as configured', () => {
    expect(readsInParallel(16 * 2 ** 20 - 1, {})).toBe(false);
    expect(readsInParallel(16 * 2 ** 20, {})).toBe(true);
    expect(readsInParallel(256 * 2 ** 20, {})).toBe(true);
    expect(readsInParallel(256 * 2 ** 20 + 1, {})).toBe(false);
    expect(readsInParallel(100, { minBytes: 0 })).toBe(true);
    expect(readsInParallel(0, { minBytes: 0 })).toBe(false);
    expect(readsInParallel(64 * 2 ** 20, false)).toBe(false);
    expect(readsInParallel(64 * 2 ** 20, undefined)).toBe(false);
  });

  // What it checks needs only enough chunks for both threads to take some: 2,000 lines in
  // 1 KiB chunks (about 400) do, at a quarter of the work; the timeout is for a machine
  // running eight test processes at once, where this took 60 s.
  it('shares the chunks: the worker reads lines from the back, the main thread from the front', { timeout: 240_000 }, async () => {
    const first = JSON.parse(corpus[0]!.bytes.toString('utf8').split('\n')[0]!) as Record<string, unknown>;
    const lines = Array.from({ length: 2_000 }, (_, i) => JSON.stringify({ ...first, uuid: `u${i}`, parentUuid: i === 0 ? null : `u${i - 1}` }));
    const bytes = Buffer.from(`${lines.join('\n')}\n`);
    const file = join(scratch, 'shared.jsonl');
    writeFileSync(file, bytes);
    const pass = await parallelPass(file, bytes.length, { chunkBytes: 1024, spawn: builtOutlineWorker, startTogether: true });
    expect(pass.workerChunks).toBeGreaterThan(0);
    expect(pass.workerChunks).toBeLessThan(Math.ceil(bytes.length / 1024));
    expect([pass.line, pass.kept.length]).toEqual([2_000, 2_000]);
    await expectSameOutline(bytes, 1024);
  });

  for (const c of corpus) {
    it(`equals one pass on ${c.name}`, async () => {
      for (const chunkBytes of [1, 97, 4096]) await expectSameOutline(c.bytes, chunkBytes);
    });
  }

  it('equals one pass with a byte order mark, CRLF endings, blank lines, a line longer than many chunks and a torn tail', async () => {
    const base = corpus.find((c) => c.bytes.length > 2000)!.bytes.toString('utf8');
    const lines = base.split('\n').filter((l) => l !== '');
    const long = JSON.stringify({ ...JSON.parse(lines[0]!), uuid: 'long-line', note: 'x'.repeat(5000) });
    const text = `\ufeff${lines.slice(0, 3).join('\r\n')}\r\n\r\n   \n${long}\n${lines.slice(3).join('\n')}\n{"torn":`;
    for (const chunkBytes of [1, 33, 700, 100_000]) await expectSameOutline(Buffer.from(text, 'utf8'), chunkBytes);
  });

  it('property: damaged, shuffled, duplicated and truncated logs outline as one pass does, at any chunk size', async () => {
    const logArb = damagedLogArb(corpus.map((c) => c.bytes));
    await fc.assert(
      fc.asyncProperty(logArb, fc.integer({ min: 1, max: 3000 }), async ({ bytes }, chunkBytes) => {
        await expectSameOutline(bytes, chunkBytes);
      }),
      { numRuns: 40 },
    );
  });

  it('reads every chunk itself when the worker fails at start or dies after taking chunks', async () => {
    const logArb = damagedLogArb(corpus.map((c) => c.bytes));
    await fc.assert(
      fc.asyncProperty(logArb, fc.integer({ min: 1, max: 500 }), fc.boolean(), async ({ bytes }, chunkBytes, dies) => {
        await expectSameOutline(bytes, chunkBytes, dies ? dyingWorker : failingWorker);
      }),
      { numRuns: 30 },
    );
    await expectSameOutline(corpus[0]!.bytes, 64, () => {
      throw new Error('no threads here');
    });
    // And says so (the JSONL store warns: a broken install shows).
    const file = join(scratch, 'failing.jsonl');
    writeFileSync(file, corpus[0]!.bytes);
    const errors: unknown[] = [];
    const pass = await parallelPass(file, corpus[0]!.bytes.length, {
      chunkBytes: 8,
      spawn: failingWorker,
      startTogether: true,
      onWorkerError: (e) => errors.push(e),
    });
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/no worker today/);
    expect(pass.workerChunks).toBe(0);
  });
});
