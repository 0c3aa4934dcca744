/**
 * Moving sessions between the stores: every corpus case PostgreSQL can hold goes
 * JSONL -> ndjson -> PostgreSQL -> ndjson -> JSONL with byte-identical records
 * and the same plan at every stop. And a session longer than several read
 * batches streams back whole and in order.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { buildPlanForSession } from '../../src/recovery/index.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { readSessionLog } from '../../src/session/log-reader.js';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import { PostgresSessionStore } from '../../src/store/postgres/pg-store.js';
import { exportSession, importSession } from '../../src/store/session-transfer.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { CORPUS_DIR, listCorpus } from '../support/corpus.js';
import { databasesForFile, describePostgres } from '../support/postgres.js';
import { record } from '../support/store-records.js';

const newDatabase = databasesForFile('transfer');
const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});
const who = { host: 'transfer-host', pid: process.pid };

/** What PostgreSQL cannot hold (see postgres-store.e2e.test.ts, which checks it is refused). */
const NOT_IN_POSTGRES = new Set([
  'torn-tail',
  'torn-tail-terminated-then-resumed',
  'damaged-lines-off-chain',
  'garbage-line-replaced-chain-record',
  'mixed-session-ids',
  'foreign-first-line',
  'empty-session',
]);

function jsonlStore(): JsonlSessionStore {
  const home = mkdtempSync(join(tmpdir(), 'mend-transfer-'));
  homes.push(home);
  return new JsonlSessionStore({ home });
}

async function exported(store: SessionStore, ref: Parameters<SessionStore['read']>[0]): Promise<Buffer> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const result = await exportSession(store, ref, sink);
  expect(result.skipped).toEqual([]);
  expect(result.reserialized).toBe(0);
  return Buffer.concat(chunks);
}

await describePostgres('moving sessions between JSONL and PostgreSQL', () => {
  let pg: PostgresSessionStore;
  afterAll(async () => pg?.close());

  const cases = listCorpus().filter((c) => !NOT_IN_POSTGRES.has(c.name));
  it.each(cases.map((c) => [c.name]))('%s: JSONL -> PostgreSQL -> JSONL, byte-identical, same plan', async (name) => {
    pg ??= new PostgresSessionStore({ spec: (await newDatabase()).url, env: {} });
    const fixture = join(CORPUS_DIR, name, 'session.jsonl');
    const bytes = readFileSync(fixture);
    const plan = buildPlanForSession(buildConversation(await readSessionLog(fixture)));
    const scope = { projectRoot: `/work/transfer/${name}`, cwd: `/work/transfer/${name}` };

    const source = jsonlStore();
    const first = await importSession(source, scope, Readable.from([bytes]), { who });
    const fromJsonl = await exported(source, first.ref);
    expect(fromJsonl.equals(bytes)).toBe(true);

    const inPg = await importSession(pg, scope, Readable.from([fromJsonl]), { who });
    expect(buildPlanForSession(buildConversation(await pg.read(inPg.ref)))).toEqual(plan);
    const fromPg = await exported(pg, inPg.ref);
    expect(fromPg.equals(bytes)).toBe(true);

    const back = jsonlStore();
    const last = await importSession(back, scope, Readable.from([fromPg]), { who });
    expect(readFileSync(last.ref.location).equals(bytes)).toBe(true);
    expect(buildPlanForSession(buildConversation(await back.read(last.ref)))).toEqual(plan);
  });

  it('keeps the title of a Qwen custom_title record on the session and lists it', async () => {
    const store = new PostgresSessionStore({ spec: (await newDatabase()).url, env: {} });
    const scope = { projectRoot: '/work/titled', cwd: '/work/titled' };
    const bytes = readFileSync(join(CORPUS_DIR, 'system-records-on-chain', 'session.jsonl'));
    await importSession(store, scope, Readable.from([bytes]), { who });
    expect((await store.list(scope)).map((l) => l.title)).toEqual(['PayPal module summary']);
    await store.close();
  });

  it('two imports of one session at once: one writes it, the other is refused, nothing is doubled', async () => {
    const store = new PostgresSessionStore({ spec: (await newDatabase()).url, env: {} });
    const bytes = readFileSync(join(CORPUS_DIR, 'clean-tool-round-trip', 'session.jsonl'));
    const scope = { projectRoot: '/work/twice', cwd: '/work/twice' };
    const outcomes = await Promise.allSettled([0, 1].map(() => importSession(store, scope, Readable.from([bytes]), { who })));
    const done = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as { code?: string }] : []));
    expect(done).toHaveLength(1);
    expect(refused.map((e) => e.code)).toEqual([expect.stringMatching(/^session_(exists|locked)$/)]);
    const ref = (done[0] as PromiseFulfilledResult<{ ref: Parameters<SessionStore['read']>[0] }>).value.ref;
    expect((await exported(store, ref)).equals(bytes)).toBe(true);
    await store.close();
  });

  it('streams a session longer than several read batches whole and in order', async () => {
    const store = new PostgresSessionStore({ spec: (await newDatabase()).url, env: {}, tuning: { readBatch: 7 } });
    const id = '0b6f3a5e-6c9e-4a1e-9d53-2f7f0c1d9e01';
    const ref = await store.newSession({ projectRoot: '/work/long', cwd: '/work/long' }, id);
    const lease = await store.acquire(ref, who);
    const uuids: string[] = [];
    let parent: string | null = null;
    for (let n = 1; n <= 50; n++) {
      const r = record(id, n, parent, new Date(Date.UTC(2026, 4, 1, 0, 0, n)).toISOString());
      await lease.append(r, { durable: n === 50 });
      uuids.push(r.uuid);
      parent = r.uuid;
    }
    await lease.release();
    const read = await store.read(ref);
    expect(read.records.map((r) => r.record.uuid)).toEqual(uuids);
    expect(read.records.map((r) => r.line)).toEqual(uuids.map((_, i) => i + 1));
    const lines: string[] = [];
    for await (const line of store.readLines(ref)) lines.push(line);
    expect(lines.map((l) => (JSON.parse(l) as { uuid: string }).uuid)).toEqual(uuids);
    await store.close();
  });
});
