/**
 * PostgreSQL across processes (standing for machines): 50 writers race for one
 * session, one connection each: one wins, 49 are refused with session_locked
 * naming the winner, and the session has no gap in seq. Two processes migrate
 * an empty database at the same moment: both succeed, each version once.
 */
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { expect, it } from 'vitest';
import { adminQuery, databasesForFile, describePostgres } from '../support/postgres.js';
import { isMendError } from '../../src/errors.js';
import { buildPlanForSession } from '../../src/recovery/index.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { readSessionLog } from '../../src/session/log-reader.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { LATEST_VERSION } from '../../src/store/postgres/pg-schema.js';
import { PostgresSessionStore } from '../../src/store/postgres/pg-store.js';

// The built script (npm test builds first): 50 processes that each compiled TypeScript at
// start-up took minutes of CPU on a busy 2-core machine.
const SCRIPT = resolve(import.meta.dirname, '../../dist/test/support/pg-writer-process.js');
const newDatabase = databasesForFile('procs');

type Child = ResultPromise<{ reject: false; stdin: 'pipe'; stdout: 'pipe' }>;

function spawnWriter(args: string[]): Child {
  return execa('node', [SCRIPT, ...args], { reject: false, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' }) as Child;
}

/** Resolves with each JSON line the child prints, in order. */
function jsonLines(child: Child): AsyncIterator<Record<string, unknown>> {
  const rl = createInterface({ input: child.stdout! });
  const it = rl[Symbol.asyncIterator]();
  return {
    next: async () => {
      const step = await it.next();
      return step.done ? { done: true, value: undefined } : { done: false, value: JSON.parse(step.value) as Record<string, unknown> };
    },
  };
}

async function nextLine(lines: AsyncIterator<Record<string, unknown>>, child: Child): Promise<Record<string, unknown>> {
  const step = await lines.next();
  if (step.done) throw new Error(`child ended early: ${(await child).stderr}`);
  return step.value;
}

await describePostgres('PostgreSQL store across processes', () => {
  it('50 writers in 50 processes: one wins, 49 session_locked naming it, no gap in seq', { timeout: 180_000 }, async () => {
    const db = await newDatabase();
    // Migrated beforehand so the race is about the lease (the migration race has its own test).
    const setup = new PostgresSessionStore({ spec: db.url, env: {} });
    await setup.migrate();
    await setup.close();
    const sessionId = randomUUID();
    const children = Array.from({ length: 50 }, (_, i) => spawnWriter(['race', db.url, sessionId, `machine-${i}`, '/work/race']));
    try {
      const lines = children.map((c) => jsonLines(c));
      for (let i = 0; i < children.length; i++) expect(await nextLine(lines[i]!, children[i]!)).toEqual({ ready: true });
      // Every process is connected to nothing and waiting: start them together.
      for (const child of children) child.stdin!.write('go\n');
      const outcomes = await Promise.all(lines.map((l, i) => nextLine(l, children[i]!)));
      const winners = outcomes.flatMap((o, i) => (o['outcome'] === 'won' ? [i] : []));
      expect(winners, JSON.stringify(outcomes.filter((o) => o['outcome'] === 'failed'))).toHaveLength(1);
      const winner = winners[0]!;
      const losers = outcomes.filter((o) => o['outcome'] === 'locked');
      expect(losers).toHaveLength(49);
      for (const loser of losers) {
        expect(loser['code']).toBe('session_locked');
        expect(loser['details']).toMatchObject({ host: `machine-${winner}`, pid: children[winner]!.pid, epoch: 1 });
      }
      const seqs = (await adminQuery(`SELECT seq FROM mend.records WHERE session_id = $1 ORDER BY seq`, [sessionId], db.url)).rows.map((r) => Number(r.seq));
      expect(seqs).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      const lease = (await adminQuery(`SELECT epoch, host FROM mend.leases WHERE session_id = $1`, [sessionId], db.url)).rows[0];
      expect(lease).toEqual({ epoch: '1', host: `machine-${winner}` });
    } finally {
      for (const child of children) child.stdin!.end();
      await Promise.all(children);
    }
  });

  it('a writer killed mid-tool on machine A: B is refused while A lives, then plans a crash and takes over', { timeout: 60_000 }, async () => {
    const db = await newDatabase();
    const fixture = join(CORPUS_DIR, 'dangling-single-call', 'session.jsonl');
    const a = spawnWriter(['hold', db.url, fixture, 'machine-a', '/work/two-machines']);
    const store = new PostgresSessionStore({ spec: db.url, env: {} });
    try {
      const written = await nextLine(jsonLines(a), a);
      expect(written).toMatchObject({ epoch: 1 });
      const scope = { projectRoot: '/work/two-machines', cwd: '/work/two-machines' };
      const ref = (await store.latest(scope))!;
      expect(ref).not.toBeNull();
      expect(await store.activeWriter(ref)).toMatchObject({ host: 'machine-a', pid: a.pid, epoch: 1 });
      const refused = await store.acquire(ref, { host: 'machine-b', pid: process.pid }).catch((e: unknown) => e);
      expect(isMendError(refused, 'session_locked')).toBe(true);
      expect((refused as { details?: unknown }).details).toMatchObject({ host: 'machine-a', pid: a.pid });

      a.kill('SIGKILL');
      await a;
      // The server frees the lock when the dead process's connection closes.
      for (let i = 0; i < 100 && (await store.activeWriter(ref)) !== null; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await store.activeWriter(ref)).toBeNull();
      const plan = buildPlanForSession(buildConversation(await store.read(ref)));
      expect([plan.kind, plan.cause, plan.canContinue]).toEqual(['interrupted_turn', 'crash', true]);
      expect(plan).toEqual(buildPlanForSession(buildConversation(await readSessionLog(fixture))));
      const b = await store.acquire(ref, { host: 'machine-b', pid: process.pid });
      expect(b.holder.epoch).toBe(2);
      await b.release();
    } finally {
      a.kill('SIGKILL');
      await a;
      await store.close();
    }
  });

  it('two processes migrating an empty database at once: both succeed, each version applied once', { timeout: 60_000 }, async () => {
    const db = await newDatabase();
    const results = await Promise.all([spawnWriter(['migrate', db.url]), spawnWriter(['migrate', db.url])]);
    for (const r of results) expect(r.exitCode, r.stderr).toBe(0);
    const reports = results.map((r) => JSON.parse(r.stdout.trim()) as { migrated: number[]; version: number });
    expect(reports.map((r) => r.version)).toEqual([LATEST_VERSION, LATEST_VERSION]);
    // Exactly one of them applied the migrations; the other waited and found them done.
    expect(reports.map((r) => r.migrated.length).sort()).toEqual([0, LATEST_VERSION]);
    const versions = (await adminQuery(`SELECT version FROM mend.schema_migrations ORDER BY version`, [], db.url)).rows.map((r) => r.version);
    expect(versions).toEqual(Array.from({ length: LATEST_VERSION }, (_, i) => i + 1));
  });
});
