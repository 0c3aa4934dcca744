/**
 * `npm run bench:postgres`: load+plan of one 100k-record session from the
 * PostgreSQL store against the same session in the JSONL store, in the same run
 * (a ratio; the machine may be shared). The target: PostgreSQL within
 * 2x of JSONL. Also times the import that puts the session there.
 *
 *   node dist/bench/postgres-read.js [--records N] [--reps N] [--url postgres://…/admin_db]
 *
 * Needs a reachable server (MEND_TEST_PG_URL or 127.0.0.1:5432 as root); it
 * creates a database of its own and drops it.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildPlanForSession } from '../src/recovery/index.js';
import { buildConversation } from '../src/session/conversation-loader.js';
import { JsonlSessionStore } from '../src/store/jsonl/jsonl-store.js';
import { PostgresSessionStore } from '../src/store/postgres/pg-store.js';
import { importSession } from '../src/store/session-transfer.js';
import type { SessionRef, SessionStore } from '../src/store/session-store.js';
import { ensureSession } from './generate.js';

const argv = process.argv.slice(2);
const value = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const RECORDS = Number(value('--records') ?? 100_000);
const REPS = Math.max(3, Number(value('--reps') ?? 5));
const ADMIN = value('--url') ?? process.env['MEND_TEST_PG_URL'] ?? 'postgres://root@127.0.0.1:5432/postgres';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = resolve(here, here.includes('/dist/') ? '../..' : '..');

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function loadPlan(store: SessionStore, ref: SessionRef): Promise<number> {
  const start = performance.now();
  const plan = buildPlanForSession(buildConversation(await store.read(ref)));
  if (plan.sessionId !== ref.sessionId) throw new Error('wrong session read');
  return performance.now() - start;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const benchDir = join(root, '.bench');
mkdirSync(benchDir, { recursive: true });
const session = ensureSession(benchDir, { label: `pg-small-${RECORDS}`, profile: 'small', records: RECORDS, seed: RECORDS });
const database = `mend_bench_${randomBytes(4).toString('hex')}`;
const home = mkdtempSync(join(tmpdir(), 'mend-bench-pg-'));
await admin(`CREATE DATABASE ${database}`);
const url = new URL(ADMIN);
url.pathname = `/${database}`;
const pgStore = new PostgresSessionStore({ spec: url.toString(), env: {} });
const jsonl = new JsonlSessionStore({ home });
try {
  const scope = { projectRoot: '/work/bench', cwd: '/work/bench' };
  const who = { host: 'bench', pid: process.pid };
  let start = performance.now();
  const inJsonl = await importSession(jsonl, scope, createReadStream(session.path), { who });
  const jsonlImportMs = performance.now() - start;
  start = performance.now();
  const inPg = await importSession(pgStore, scope, createReadStream(session.path), { who });
  const pgImportMs = performance.now() - start;

  const ratios: number[] = [];
  const pgMs: number[] = [];
  const jsonlMs: number[] = [];
  await loadPlan(pgStore, inPg.ref); // warm-up: connections, JIT
  await loadPlan(jsonl, inJsonl.ref);
  for (let i = 0; i < REPS; i++) {
    // Alternating order, so a busy moment hurts both.
    const a = i % 2 === 0 ? await loadPlan(jsonl, inJsonl.ref) : NaN;
    const p = await loadPlan(pgStore, inPg.ref);
    const b = Number.isNaN(a) ? await loadPlan(jsonl, inJsonl.ref) : a;
    pgMs.push(p);
    jsonlMs.push(b);
    ratios.push(p / b);
  }
  const fmt = (ms: number): string => `${ms.toFixed(0)} ms`;
  console.log(`session: ${session.records} records, ${(session.bytes / 2 ** 20).toFixed(1)} MB (${session.path})`);
  console.log(`import: JSONL ${fmt(jsonlImportMs)}, PostgreSQL ${fmt(pgImportMs)}`);
  console.log(`load+plan median of ${REPS}: JSONL ${fmt(median(jsonlMs))}, PostgreSQL ${fmt(median(pgMs))}`);
  console.log(`PostgreSQL / JSONL (median of per-run ratios): x${median(ratios).toFixed(2)} (target: <= x2)`);
  if (argv.includes('--check') && median(ratios) > 2) process.exitCode = 1;
} finally {
  await pgStore.close();
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  rmSync(home, { recursive: true, force: true });
}
