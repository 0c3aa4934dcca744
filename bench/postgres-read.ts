/**
 * `npm run bench:postgres`: load+plan of one 100k-record session from the
 * PostgreSQL store against the same session in the JSONL store, in the same run
 * (a ratio; the machine may be shared). The target: PostgreSQL within
 * 2x of JSONL. Also times the import that puts the session there.
 *
 * Warm resume (plan checkpoints in rows, src/store/postgres/pg-checkpoints.ts): spawn ->
 * system/recovery of `mend --resume <id> --store <url>` for the 100k-record session
 * against a 10-record one in the same database, once each read to fill the checkpoints,
 * then alternating, with checkpoints on (target: <= 1.2x the 10-record one, like files)
 * and off (MEND_CHECKPOINTS=0: the whole session read). Then the same in process
 * (loadPlanHead), and a resume right after a turn was appended (the window and the
 * turn read, the checkpoint rewritten).
 *
 *   node dist/bench/postgres-read.js [--records N] [--reps N] [--url postgres://…/admin_db]
 *
 * Needs a reachable server (MEND_TEST_PG_URL or 127.0.0.1:5432 as root); it
 * creates a database of its own and drops it.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildPlanForSession } from '../src/recovery/index.js';
import { settledCheckpointWrites } from '../src/runtime/checkpoint/plan-checkpoints.js';
import { loadPlanHead } from '../src/runtime/load-and-plan.js';
import type { ChatRecord } from '../src/session/records.js';
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

const mendBin = join(root, 'bin', 'mend.js');

/** Spawn -> the system/recovery line of a resume (the process then runs to its end). */
function spawnRecovery(sessionId: string, storeUrl: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ ms: number; planId: string }> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [mendBin, '--resume', sessionId, '--store', storeUrl, '-o', 'stream-json'], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let found: { ms: number; planId: string } | null = null;
    let buffer = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffer += d;
      let nl: number;
      while (found === null && (nl = buffer.indexOf('\n')) !== -1) {
        const text = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const line = JSON.parse(text) as Record<string, unknown>;
          if (line['type'] === 'system' && line['subtype'] === 'recovery') found = { ms: performance.now() - t0, planId: String(line['plan_id']) };
        } catch {
          // not a frame
        }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`resume of ${sessionId} exited ${code}: ${err}`));
      if (found === null) return reject(new Error(`resume of ${sessionId}: no system/recovery line`));
      resolvePromise(found);
    });
  });
}

/** A user prompt and a model answer after the session's last record (what one turn appends). */
function turnRecords(sessionId: string, parentUuid: string | null, n: number): ChatRecord[] {
  const at = new Date(Date.UTC(2026, 5, 1, 0, 0, n)).toISOString();
  const user = randomUUID();
  const base = { sessionId, timestamp: at, version: 'mend/0.1.0', cwd: '/work/bench' };
  return [
    { ...base, uuid: user, parentUuid, type: 'user', message: { role: 'user', parts: [{ text: `appended prompt ${n}` }] } },
    { ...base, uuid: randomUUID(), parentUuid: user, type: 'assistant', message: { role: 'model', parts: [{ text: `appended answer ${n}` }] } },
  ] as ChatRecord[];
}

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

  // ---- warm resume: plan checkpoints in rows ----
  const tiny = ensureSession(benchDir, { label: 'pg-small-10', profile: 'small', records: 10, seed: 10 });
  const inPgTiny = await importSession(pgStore, scope, createReadStream(tiny.path), { who });
  const cwd = mkdtempSync(join(tmpdir(), 'mend-bench-pg-cwd-'));
  const on = { ...process.env, MEND_HOME: home, MEND_CHECKPOINTS: '1' };
  const off = { ...on, MEND_CHECKPOINTS: '0' };
  const storeUrl = url.toString();
  const planIds = new Set<string>();
  const sessions = [inPgTiny.ref.sessionId, inPg.ref.sessionId];
  // One read each fills the checkpoint rows.
  for (const id of sessions) planIds.add((await spawnRecovery(id, storeUrl, on, cwd)).planId);
  const warm = { on: [[], []] as number[][], off: [[], []] as number[][] };
  for (let rep = 0; rep < REPS; rep++) {
    const steps: Array<() => Promise<void>> = [];
    sessions.forEach((id, i) => {
      steps.push(async () => {
        const t = await spawnRecovery(id, storeUrl, on, cwd);
        planIds.add(t.planId);
        warm.on[i]!.push(t.ms);
      });
      steps.push(async () => void warm.off[i]!.push((await spawnRecovery(id, storeUrl, off, cwd)).ms));
    });
    if (rep % 2 === 1) steps.reverse();
    for (const step of steps) await step();
  }
  if (planIds.size !== 2) throw new Error(`warm resumes: plan ids differ between runs (${[...planIds].join(', ')})`);
  const pairs = (a: number[], b: number[]): number => median(a.map((x, i) => x / b[i]!));
  console.log(
    `warm resume, spawn -> system/recovery, median of ${REPS}: 10 rec ${fmt(median(warm.on[0]!))}, ${session.records} rec ${fmt(median(warm.on[1]!))}: ` +
      `x${pairs(warm.on[1]!, warm.on[0]!).toFixed(2)} (target: <= x1.2)`,
  );
  console.log(
    `  checkpoints off (MEND_CHECKPOINTS=0): 10 rec ${fmt(median(warm.off[0]!))}, ${session.records} rec ${fmt(median(warm.off[1]!))}: ` +
      `x${pairs(warm.off[1]!, warm.off[0]!).toFixed(2)}`,
  );

  // In process: loadPlanHead through the checkpoint row (the kept plan) and the plain pass.
  const ckStore = new PostgresSessionStore({ spec: storeUrl, env: {}, checkpoints: {} });
  try {
    const timePlan = async (store: SessionStore, id: string): Promise<number> => {
      const start = performance.now();
      await loadPlanHead(store, await store.resolve(scope, id), false, null);
      return performance.now() - start;
    };
    for (const id of sessions) await timePlan(ckStore, id);
    await settledCheckpointWrites();
    const inProcess = { tinyOn: [] as number[], bigOn: [] as number[], bigOff: [] as number[] };
    for (let i = 0; i < REPS; i++) {
      inProcess.tinyOn.push(await timePlan(ckStore, sessions[0]!));
      inProcess.bigOn.push(await timePlan(ckStore, sessions[1]!));
      inProcess.bigOff.push(await timePlan(pgStore, sessions[1]!));
    }
    console.log(
      `  in process (loadPlanHead), median of ${REPS}: 10 rec ${median(inProcess.tinyOn).toFixed(1)} ms, ${session.records} rec ` +
        `${median(inProcess.bigOn).toFixed(1)} ms (off: ${fmt(median(inProcess.bigOff))})`,
    );

    // A turn appended, then a resume: the window and the turn are read, the checkpoint row rewritten.
    const appended: number[] = [];
    const bigRef = await pgStore.resolve(scope, sessions[1]!);
    for (let i = 0; i < REPS; i++) {
      const read = await pgStore.read(bigRef);
      const last = read.records.filter((r) => r.record.isSidechain !== true).at(-1)?.record.uuid ?? null;
      const lease = await pgStore.acquire(bigRef, who);
      for (const record of turnRecords(sessions[1]!, last, i)) await lease.append(record, { durable: true });
      await lease.release();
      appended.push((await spawnRecovery(sessions[1]!, storeUrl, on, cwd)).ms);
    }
    console.log(`  resume right after a turn was appended, ${session.records} rec: ${fmt(median(appended))} (median of ${REPS})`);
  } finally {
    await ckStore.close();
    rmSync(cwd, { recursive: true, force: true });
  }
} finally {
  await pgStore.close();
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  rmSync(home, { recursive: true, force: true });
}
