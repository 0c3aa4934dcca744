/**
 * The store contract suite against the embedded default, the JSONL store. A
 * JSONL log can hold any bytes, so every corpus case applies.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import { exportSession } from '../../src/store/session-transfer.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { failingWorker } from '../support/outline-worker.js';
import { storeContract } from '../support/store-contract.js';
import { sessionIdOf } from '../support/store-fixtures.js';

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

storeContract({
  name: 'jsonl',
  open: async () => {
    const home = mkdtempSync(join(tmpdir(), 'mend-store-contract-'));
    homes.push(home);
    return new JsonlSessionStore({ home });
  },
  seed: async (store, scope, sessionId, lines) => {
    const ref = await store.newSession(scope, sessionId);
    mkdirSync(dirname(ref.location), { recursive: true, mode: 0o700 });
    writeFileSync(ref.location, lines.join('\n'), { mode: 0o600 });
    return ref;
  },
});

it('export of a JSONL log with a torn tail copies the whole lines and names the torn one', async () => {
  const home = mkdtempSync(join(tmpdir(), 'mend-store-export-'));
  homes.push(home);
  const store = new JsonlSessionStore({ home });
  const lines = readFileSync(join(CORPUS_DIR, 'torn-tail', 'session.jsonl'), 'utf8').split('\n');
  const ref = await store.newSession({ projectRoot: '/work/torn', cwd: '/work/torn' }, sessionIdOf(lines));
  mkdirSync(dirname(ref.location), { recursive: true });
  writeFileSync(ref.location, lines.join('\n'));
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const result = await exportSession(store, ref, sink);
  expect(result).toEqual({ records: 3, reserialized: 0, skipped: [{ line: 4, reason: 'not JSON (torn or damaged line)' }] });
  expect(Buffer.concat(chunks).toString('utf8')).toBe(lines.slice(0, 3).join('\n') + '\n');
});

it('a large log read on two threads: a worker that fails is warned about and the outline is still whole', async () => {
  const home = mkdtempSync(join(tmpdir(), 'mend-store-worker-'));
  homes.push(home);
  const warnings: string[] = [];
  const outline = { chunkBytes: 64, minBytes: 0, startTogether: true, spawn: failingWorker };
  const store = new JsonlSessionStore({ home, warn: (m) => warnings.push(m), outline });
  const plain = new JsonlSessionStore({ home, outline: false });
  const lines = readFileSync(join(CORPUS_DIR, 'qwen-interrupted-turn', 'session.jsonl'), 'utf8').split('\n');
  const ref = await store.newSession({ projectRoot: '/work/worker', cwd: '/work/worker' }, sessionIdOf(lines));
  mkdirSync(dirname(ref.location), { recursive: true });
  writeFileSync(ref.location, lines.join('\n'));
  const shared = await store.readOutline(ref);
  expect(warnings).toEqual([expect.stringMatching(/^the outline worker thread failed \(.*no worker today.*\); the log was read on one thread$/)]);
  const one = await plain.readOutline(ref);
  expect(shared.indexEntries()).toEqual(one.indexEntries());
  expect(shared.read).toEqual(one.read);
});
