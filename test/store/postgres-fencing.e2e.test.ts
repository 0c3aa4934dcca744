/**
 * The lease's fencing rule on a real server: after pg_terminate_backend of the
 * writer's connection, the old writer reconnects and may go on only if it takes
 * the advisory lock again and its epoch is still current. Otherwise every append
 * of it is refused with session_lease_lost, and the log holds no record of it
 * after the new writer's first.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import type { ChatRecord } from '../../src/session/records.js';
import type { PostgresLease } from '../../src/store/postgres/pg-lease.js';
import { PostgresSessionStore } from '../../src/store/postgres/pg-store.js';
import type { SessionRef, WriterLease } from '../../src/store/session-store.js';
import { adminQuery, databasesForFile, describePostgres } from '../support/postgres.js';
import { record } from '../support/store-records.js';

const newDatabase = databasesForFile('fence');
const A = { host: 'machine-a', pid: 1111 };
const B = { host: 'machine-b', pid: 2222 };
const scope = { projectRoot: '/work/fence', cwd: '/work/fence' };
const fast = { reconnectBaseDelayMs: 10, reconnectAttempts: 3 };

async function setup(): Promise<{ store: PostgresSessionStore; ref: SessionRef; url: string; id: string }> {
  const db = await newDatabase();
  const store = new PostgresSessionStore({ spec: db.url, env: {}, tuning: fast });
  const id = randomUUID();
  return { store, ref: await store.newSession(scope, id), url: db.url, id };
}

function rec(id: string, n: number, writer: string): ChatRecord {
  return record(id, n, n === 1 ? null : `${id.slice(0, 8)}-u${n - 1}`, new Date(Date.UTC(2026, 3, 1, 0, 0, n)).toISOString(), `${writer} ${n}`);
}

async function terminate(lease: WriterLease): Promise<void> {
  const pid = (lease as PostgresLease).backendPid;
  expect(pid).not.toBeNull();
  const killed = await adminQuery('SELECT pg_terminate_backend($1) AS ok', [pid]);
  expect(killed.rows[0]).toEqual({ ok: true });
  // pg_terminate_backend only signals: the backend (and its advisory lock) goes a moment later.
  for (let i = 0; i < 250; i++) {
    if ((await adminQuery('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`backend ${pid} did not exit`);
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (e: unknown) => e,
  );
}

await describePostgres('PostgreSQL lease fencing', () => {
  it("a terminated writer whose session was taken over is refused session_lease_lost; no record of it after the new writer's first", async () => {
    const { store, ref, id } = await setup();
    const a = await store.acquire(ref, A);
    await a.append(rec(id, 1, 'A'), { durable: true });
    await terminate(a);

    const b = await store.acquire(ref, B);
    expect(b.holder.epoch).toBe(2);
    expect(await store.activeWriter(ref)).toMatchObject({ store: 'postgres', host: B.host, pid: B.pid, epoch: 2 });
    await b.append(rec(id, 2, 'B'), { durable: true });

    const lost = await refusal(a.append(rec(id, 2, 'A'), { durable: true }));
    expect(isMendError(lost, 'session_lease_lost')).toBe(true);
    expect((lost as { details?: unknown }).details).toMatchObject({ epoch: 1, holder: { host: B.host, pid: B.pid, epoch: 2 } });
    // Lost for good, also for a later append.
    expect(isMendError(await refusal(a.append(rec(id, 3, 'A'), { durable: false })), 'session_lease_lost')).toBe(true);

    await b.append(rec(id, 3, 'B'), { durable: true });
    await a.release();
    await b.release();
    const texts = (await store.read(ref)).records.map((r) => (r.record as { message: { parts: { text: string }[] } }).message.parts[0]!.text);
    expect(texts).toEqual(['A 1', 'B 2', 'B 3']);
    await store.close();
  });

  it('an append waiting while the epoch is bumped re-checks it and inserts nothing', async () => {
    const { store, ref, id, url } = await setup();
    const a = await store.acquire(ref, A);
    await a.append(rec(id, 1, 'A'), { durable: true });
    // A takeover's epoch bump, held open in a transaction of its own.
    const bump = new pg.Client({ connectionString: url });
    await bump.connect();
    try {
      await bump.query('BEGIN');
      await bump.query('UPDATE mend.leases SET epoch = epoch + 1 WHERE session_id = $1', [id]);
      const pending = refusal(a.append(rec(id, 2, 'A'), { durable: true }));
      // Wait until the append is really blocked on the lease row.
      const writerPid = (a as PostgresLease).backendPid;
      let blocked = false;
      for (let i = 0; i < 250 && !blocked; i++) {
        const waiting = await bump.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [writerPid]);
        blocked = waiting.rowCount === 1;
        if (!blocked) await new Promise((r) => setTimeout(r, 20));
      }
      expect(blocked).toBe(true);
      await bump.query('COMMIT');
      const lost = await pending;
      expect(isMendError(lost, 'session_lease_lost')).toBe(true);
    } finally {
      await bump.end();
    }
    await a.release();
    expect((await adminQuery('SELECT seq FROM mend.records WHERE session_id = $1', [id], url)).rows).toEqual([{ seq: '1' }]);
    await store.close();
  });

  it('a terminated writer whose epoch moved on is refused even when the lock is free again', async () => {
    const { store, ref, id } = await setup();
    const a = await store.acquire(ref, A);
    await a.append(rec(id, 1, 'A'), { durable: true });
    await terminate(a);
    const b = await store.acquire(ref, B);
    await b.append(rec(id, 2, 'B'), { durable: true });
    await b.release();
    expect(await store.activeWriter(ref)).toBeNull();

    // A reconnects and takes the advisory lock, but epoch 1 is no longer current.
    const lost = await refusal(a.append(rec(id, 3, 'A'), { durable: true }));
    expect(isMendError(lost, 'session_lease_lost')).toBe(true);
    expect((lost as { details?: unknown }).details).toMatchObject({ epoch: 1 });
    // And it let go of the lock it took to find out.
    expect(await store.activeWriter(ref)).toBeNull();
    const c = await store.acquire(ref, B);
    expect(c.holder.epoch).toBe(3);
    await c.release();
    await a.release();
    expect((await store.read(ref)).records).toHaveLength(2);
    await store.close();
  });

  it('a writer whose connection dropped goes on after reconnecting when nobody took over', async () => {
    const { store, ref, id } = await setup();
    const a = await store.acquire(ref, A);
    await a.append(rec(id, 1, 'A'), { durable: true });
    const before = (a as PostgresLease).backendPid;
    await terminate(a);
    await a.append(rec(id, 2, 'A'), { durable: true });
    expect((a as PostgresLease).backendPid).not.toBe(before);
    expect(await store.activeWriter(ref)).toMatchObject({ host: A.host, pid: A.pid, epoch: 1 });
    expect(isMendError(await refusal(store.acquire(ref, B)), 'session_locked')).toBe(true);
    await a.release();
    expect((await store.read(ref)).records.map((r) => r.line)).toEqual([1, 2]);
    await store.close();
  });

  it('a re-sent append of a committed record is recognised, not written twice; another record at that seq is refused', async () => {
    const { store, ref, id, url } = await setup();
    const a = await store.acquire(ref, A);
    await a.append(rec(id, 1, 'A'), { durable: true });
    // Stand for a commit whose answer was lost: the writer sends seq 1 again.
    const lease = a as unknown as { nextSeq: number };
    lease.nextSeq = 1;
    await a.append(rec(id, 1, 'A'), { durable: true });
    lease.nextSeq = 1;
    const clash = await refusal(a.append(rec(id, 7, 'A'), { durable: true }));
    expect(isMendError(clash, 'session_write_failed')).toBe(true);
    await a.release();
    const rows = (await adminQuery('SELECT seq FROM mend.records WHERE session_id = $1', [id], url)).rows;
    expect(rows).toEqual([{ seq: '1' }]);
    await store.close();
  });

  it('a batch append is one statement: all of it, re-sendable, and refused whole once fenced', async () => {
    const { store, ref, id, url } = await setup();
    const a = (await store.acquire(ref, A)) as PostgresLease;
    await a.appendBatch([rec(id, 1, 'A'), rec(id, 2, 'A'), rec(id, 3, 'A')], { durable: true });
    // Re-sent after a lost answer: recognised, nothing doubled.
    (a as unknown as { nextSeq: number }).nextSeq = 2;
    await a.appendBatch([rec(id, 2, 'A'), rec(id, 3, 'A')], { durable: true });
    await terminate(a);
    const b = await store.acquire(ref, B);
    const lost = await refusal(a.appendBatch([rec(id, 4, 'A'), rec(id, 5, 'A')], { durable: true }));
    expect(isMendError(lost, 'session_lease_lost')).toBe(true);
    await b.release();
    const seqs = (await adminQuery('SELECT seq FROM mend.records WHERE session_id = $1 ORDER BY seq', [id], url)).rows.map((r) => Number(r.seq));
    expect(seqs).toEqual([1, 2, 3]);
    const session = (await adminQuery('SELECT last_seq, created_at < updated_at AS spans FROM mend.sessions WHERE session_id = $1', [id], url)).rows[0];
    expect(session).toEqual({ last_seq: '3', spans: true });
    await a.release();
    await store.close();
  });

  it('every append commits synchronously (an acknowledged record survives a database crash), even where the database default is asynchronous', async () => {
    const { store, ref, id, url } = await setup();
    const name = new URL(url).pathname.slice(1);
    await adminQuery(`ALTER DATABASE ${name} SET synchronous_commit = off`);
    const a = await store.acquire(ref, A);
    const client = (a as unknown as { client: { query(sql: string): Promise<{ rows: { synchronous_commit: string }[] }> } }).client;
    const mode = async (): Promise<string | undefined> => (await client.query('SHOW synchronous_commit')).rows[0]?.synchronous_commit;
    expect(await mode()).toBe('on');
    await a.append(rec(id, 1, 'A'), { durable: false });
    expect(await mode()).toBe('on');
    await a.append(rec(id, 2, 'A'), { durable: true });
    expect(await mode()).toBe('on');
    await a.release();
    expect((await store.read(ref)).records).toHaveLength(2);
    await store.close();
  });

  it('reads go on after the pooled connections were cut', async () => {
    const { store, ref, id, url } = await setup();
    const a = await store.acquire(ref, A);
    await a.append(rec(id, 1, 'A'), { durable: true });
    await a.release();
    expect((await store.read(ref)).records).toHaveLength(1);
    const name = new URL(url).pathname.slice(1);
    // Cut every connection the store's pool holds (the idle one the read just used).
    const cut = await adminQuery(`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [
      name,
    ]);
    expect(cut.rows[0].n).toBeGreaterThanOrEqual(1);
    expect((await store.read(ref)).records).toHaveLength(1);
    await store.close();
  });

  it('records are append-only in the database itself', async () => {
    const { store, ref, id, url } = await setup();
    const a = await store.acquire(ref, A);
    await a.append(rec(id, 1, 'A'), { durable: true });
    await a.release();
    await expect(adminQuery(`UPDATE mend.records SET record = record WHERE session_id = $1`, [id], url)).rejects.toThrow(/append-only/);
    await expect(adminQuery(`DELETE FROM mend.records WHERE session_id = $1`, [id], url)).rejects.toThrow(/append-only/);
    await store.close();
  });
});
