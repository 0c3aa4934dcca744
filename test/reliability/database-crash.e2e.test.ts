/**
 * A database crash must not turn into a damaged history.
 *
 * End to end: a private PostgreSQL instance (never the shared server) with a long
 * wal_writer_delay and asynchronous commits by default, so a commit that is not
 * synchronous sits in memory for seconds; one stream-json process runs turn 1, the
 * server is crashed (`pg_ctl -m immediate stop`) and started again, then turn 2 runs
 * on the same process. Every record acknowledged in turn 1 (its final answer too) must
 * still be there, and turn 2 must chain onto it: the plan is clean, never
 * degraded_history.
 *
 * In process, on the shared server: a writer whose acknowledged records were lost
 * (deleted behind its back, then its connection cut) re-appends them after it
 * reconnects, before anything new; one that no longer holds what is missing gives its
 * lease up with a clear error instead of chaining onto a missing record.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import type { ChatRecord } from '../../src/session/records.js';
import type { PostgresLease } from '../../src/store/postgres/pg-lease.js';
import { PostgresSessionStore } from '../../src/store/postgres/pg-store.js';
import { cleanupSandboxes, makeSandbox, mend, spawnMend, watchStdout, writeScript } from '../support/cli.js';
import { adminQuery, databasesForFile, describePostgres } from '../support/postgres.js';
import { privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { record } from '../support/store-records.js';

const instances: PrivatePostgres[] = [];
afterAll(() => {
  for (const pg of instances.splice(0)) pg.destroy();
  cleanupSandboxes();
});
const newDatabase = databasesForFile('dbcrash');

const why = privatePostgresUnavailable();
const describeCrash = why === null ? describe : process.env['CI'] === 'true' ? describe : describe.skip;
if (why !== null) console.warn(`\n!! SKIPPED: the database crash test needs a private PostgreSQL instance (${why})\n`);

describeCrash('a database crash and restart between two turns', () => {
  it('turn 2 chains onto turn 1 as acknowledged: nothing lost, the plan is clean', { timeout: 180_000 }, async () => {
    if (why !== null) throw new Error(`a private PostgreSQL instance is needed in CI: ${why}`);
    const server = await startPrivatePostgres({
      wal_writer_delay: '10000ms',
      wal_writer_flush_after: '1GB',
      synchronous_commit: 'off',
      fsync: 'on',
    });
    instances.push(server);
    const sb = makeSandbox('dbcrash');
    const sessionId = randomUUID();
    const script = writeScript(sb, [{ text: 'The answer to turn one.' }, { text: 'The answer to turn two.' }]);
    const storeArgs = ['--store', server.url];
    const sub = spawnMend(sb, ['--session-id', sessionId, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script, ...storeArgs], {
      stdin: 'pipe',
      timeout: 150_000,
    });
    const out = watchStdout(sub);
    const user = (text: string) => `${JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: text }, parent_tool_use_id: null })}\n`;
    sub.stdin!.write(user('turn one'));
    await out.waitFor((l) => l.includes('"type":"result"') && l.includes('turn one'), 60_000);

    server.crash();
    server.start();

    sub.stdin!.write(user('turn two'));
    await out.waitFor((l) => l.includes('"type":"result"') && l.includes('turn two'), 90_000);
    sub.stdin!.end();
    const done = await sub;
    expect(done.exitCode, String(done.stderr)).toBe(0);

    const exported = await mend(sb, ['sessions', 'export', sessionId, ...storeArgs]);
    const records = exported.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ChatRecord);
    const texts = records.map((r) => (r.type === 'user' || r.type === 'assistant' ? r.message.parts.map((p) => p.text ?? '').join('') : r.type));
    expect(texts).toEqual(['turn one', 'The answer to turn one.', 'turn two', 'The answer to turn two.']);
    records.forEach((r, i) => expect(r.parentUuid).toBe(i === 0 ? null : records[i - 1]!.uuid));
    const plan = JSON.parse((await mend(sb, ['plan', sessionId, '--json', ...storeArgs])).stdout) as { kind: string };
    expect(plan.kind).toBe('clean');
  });
});

const scope = { projectRoot: '/work/dbcrash', cwd: '/work/dbcrash' };
function rec(id: string, n: number): ChatRecord {
  return record(id, n, n === 1 ? null : `${id.slice(0, 8)}-u${n - 1}`, new Date(Date.UTC(2026, 3, 1, 0, 0, n)).toISOString(), `record ${n}`);
}

async function loseRows(url: string, sessionId: string, fromSeq: number, lease: PostgresLease): Promise<void> {
  // What a crash that lost commits leaves: the rows are gone (the append-only trigger is bypassed as a replica would).
  const client = new (await import('pg')).default.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica');
    await client.query('DELETE FROM mend.records WHERE session_id = $1 AND seq >= $2', [sessionId, fromSeq]);
  } finally {
    await client.end();
  }
  const pid = lease.backendPid;
  await adminQuery('SELECT pg_terminate_backend($1)', [pid]);
  for (let i = 0; i < 250 && (await adminQuery('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount !== 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

await describePostgres('after a reconnect the writer checks its acknowledged records', () => {
  it('re-appends acknowledged records the database lost, before the next one', { timeout: 60_000 }, async () => {
    const db = await newDatabase();
    const store = new PostgresSessionStore({ spec: db.url, env: {}, tuning: { reconnectBaseDelayMs: 10, reconnectAttempts: 3 } });
    const id = randomUUID();
    const ref = await store.newSession(scope, id);
    const lease = (await store.acquire(ref, { host: 'a', pid: 1 })) as PostgresLease;
    for (let n = 1; n <= 3; n++) await lease.append(rec(id, n), { durable: true });
    await loseRows(db.url, id, 2, lease);
    await lease.append(rec(id, 4), { durable: true });
    await lease.release();
    const texts = (await store.read(ref)).records.map((r) => (r.record as { message: { parts: { text: string }[] } }).message.parts[0]!.text);
    expect(texts).toEqual(['record 1', 'record 2', 'record 3', 'record 4']);
    await store.close();
  });

  it('gives the lease up with a clear error when what is missing is more than it holds', { timeout: 60_000 }, async () => {
    const db = await newDatabase();
    const store = new PostgresSessionStore({ spec: db.url, env: {}, tuning: { reconnectBaseDelayMs: 10, reconnectAttempts: 3 } });
    const id = randomUUID();
    const ref = await store.newSession(scope, id);
    const first = await store.acquire(ref, { host: 'a', pid: 1 });
    for (let n = 1; n <= 3; n++) await first.append(rec(id, n), { durable: true });
    await first.release();
    const lease = (await store.acquire(ref, { host: 'b', pid: 2 })) as PostgresLease;
    await lease.append(rec(id, 4), { durable: true });
    await loseRows(db.url, id, 3, lease);
    const error = await lease.append(rec(id, 5), { durable: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isMendError(error, 'session_write_failed'), String(error)).toBe(true);
    expect(String((error as Error).message)).toContain('gave up its lease');
    // Nothing was chained onto the missing record, and the session is free for the next writer.
    expect((await store.read(ref)).records).toHaveLength(2);
    expect(await store.activeWriter(ref)).toBeNull();
    await lease.release();
    await store.close();
  });
});
