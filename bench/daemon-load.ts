/**
 * `npm run bench:daemon` (or `npm run bench -- --daemon`): `mend serve` under load.
 * N sessions at once (default 50, 200 and 1,000), each running two turns against a
 * loopback OpenAI-compatible model (bench/loopback-model.ts): turn 0 is a model call, a
 * shell tool (`cat marker.txt`) and a second model call, turn 1 one model call. Reports
 * turns/s, p50/p99 time from sending a prompt to its first event and to its terminal
 * event, the daemon's peak RSS (its whole process tree), and every error.
 *
 * Subjects, each on a fresh daemon per N, in the same run:
 *   mend        the build as it is
 *   mend-sync   the same build with its daemon optimisations off (MEND_APPEND_MODE=sync
 *               MEND_SHELL_WORKERS=0 MEND_ACCEPT_COPIES=0 MEND_SSE_DIRECT=0
 *               MEND_OPENAI_TRANSPORT=sdk): every durable append a write + fsync on the
 *               event loop, every shell command started on it, node's one listening
 *               descriptor, events through hono's streamSSE, model calls through the
 *               `openai` package (the oracles of those paths)
 *   mend-queued only the queued writer, to tell the optimisations apart
 *   baseline    another build's daemon (--baseline-bin PATH/bin/mend.js, or
 *               MEND_BASELINE_BIN): the daemon as it was before, on the same load
 *   qwen        Qwen Code's `serve` 0.24.4 when installed (QWEN_CODE_BIN, or `qwen` on
 *               PATH; never a dependency), on the same load, at N <= --qwen-max (200)
 *
 *   node dist/bench/daemon-load.js [--sessions 50,200,1000] [--subjects mend,mend-sync,baseline,qwen]
 *        [--baseline-bin PATH] [--reps 3] [--qwen-max 200] [--turn-timeout-ms 300000] [--fresh-connections]
 *        [--json FILE] [--check]
 *
 * The client keeps its connections alive, as fetch does in mend's SDK and Qwen's;
 * --fresh-connections opens one per call (bench/daemon-client.ts says why that is the
 * worst case for a busy daemon). Besides the turn figures, each row reports how long the
 * sessions' other calls took (create, the event stream's subscription, close).
 *
 * At 200 sessions (the targets' N) every subject but Qwen's runs --reps rounds, in turn.
 * --check exits 1 when a target of the daemon is missed: p99 first event < 1 s at 200
 * (median over the rounds); turns/s at 200 >= 2x the baseline's (the daemon before), or
 * the sync path's when no baseline ran (median of the per-round ratios); 1,000 sessions
 * without errors.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { driveSession, type ConnectionMode, type SessionOutcome } from './daemon-client.js';
import { findQwenCode, QWEN_CODE_VERSION } from './qwen-code.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const mendBin = join(root, 'bin', 'mend.js');
const modelJs = join(here, 'loopback-model.js');

export interface DaemonLoadRow {
  subject: string;
  sessions: number;
  turns: number;
  completedTurns: number;
  wallMs: number;
  turnsPerSecond: number;
  firstEvent: { p50: number; p99: number; max: number };
  turnEnd: { p50: number; p99: number; max: number };
  /** Peak RSS of the daemon's process tree (daemon, its children), sampled every 250 ms. */
  peakRssMb: number;
  /** Peak RSS of the daemon process itself (VmHWM). */
  daemonHwmMb: number;
  /** p50/p99 of the sessions' other calls: create, the event stream's subscription, close. */
  phases: { create: Spread; subscribe: Spread; close: Spread; firstEventByTurn: Spread[] };
  errors: number;
  errorSamples: string[];
  /** Which repetition at this N (0-based). */
  round?: number;
}

type Spread = { p50: number; p99: number; max: number };

export interface DaemonLoadOptions {
  sessions: number[];
  subjects: string[];
  qwenMax: number;
  turnTimeoutMs: number;
  /** kept: connections reused (fetch's way, the default); fresh: a connection per call. */
  connections: ConnectionMode;
  /** Rounds at 200 sessions (every subject but Qwen's each round); the check uses medians. */
  reps: number;
  /** bin/mend.js of the build the `baseline` subject runs (the daemon before this work). */
  baselineBin?: string | undefined;
  log: (line: string) => void;
}

const TURNS = 2;
/** The N the turn targets are stated at. */
const TARGET_SESSIONS = 200;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: Math.round(percentile(sorted, 50)), p99: Math.round(percentile(sorted, 99)), max: Math.round(sorted.at(-1) ?? NaN) };
}

/** RSS (KiB) of a process and all its descendants, from /proc. */
function treeRssKb(rootPid: number): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(name);
      const ppid = Number(fields[1]);
      // fields[21] is field 24 (rss, in pages).
      rss.set(pid, Number(fields[21]) * 4);
      const list = children.get(ppid) ?? [];
      list.push(pid);
      children.set(ppid, list);
    } catch {
      // Gone meanwhile.
    }
  }
  let total = 0;
  const stack = [rootPid];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

function hwmKb(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** Starts a process in a group of its own; resolves once `ready` finds what it waits for on stdout (or stderr). */
function startProcess(
  command: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; ready: (text: string) => string | null; timeoutMs: number },
): Promise<{ child: ChildProcess; found: string; output: () => string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let text = '';
    let done = false;
    const check = (chunk: Buffer) => {
      if (text.length < 1 << 20) text += chunk.toString();
      if (done) return;
      const found = opts.ready(text);
      if (found !== null) {
        done = true;
        clearTimeout(timer);
        resolvePromise({ child, found, output: () => text });
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      void stopGroup(child);
      reject(new Error(`${command} ${args.join(' ')}: not ready within ${opts.timeoutMs} ms:\n${text.slice(-2000)}`));
    }, opts.timeoutMs);
    child.on('exit', (code) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`${command} exited ${code} before it was ready:\n${text.slice(-2000)}`));
    });
  });
}

/** SIGTERM to the group this bench started, SIGKILL after `graceMs`; resolves on exit. */
async function stopGroup(child: ChildProcess, graceMs = 10_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // Already gone.
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }, graceMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

interface Sandbox {
  dir: string;
  workspace: string;
  home: string;
  marker: string;
}

function sandbox(): Sandbox {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mend-daemon-load-')));
  const workspace = join(dir, 'workspace');
  const home = join(dir, 'home');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(join(home, '.qwen'), { recursive: true });
  const marker = `marker-${randomUUID()}`;
  writeFileSync(join(workspace, 'marker.txt'), `${marker}\n`);
  // Qwen Code: the OpenAI-compatible provider, nothing that phones home.
  writeFileSync(
    join(home, '.qwen', 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'openai' } }, general: { disableAutoUpdate: true }, privacy: { usageStatisticsEnabled: false } }),
  );
  return { dir, workspace, home, marker };
}

async function startSubject(subject: string, sb: Sandbox, modelUrl: string, opts: DaemonLoadOptions): Promise<{ child: ChildProcess; url: string }> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: sb.home,
    LANG: 'C.UTF-8',
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: modelUrl,
    OPENAI_MODEL: 'test-model',
  };
  if (subject === 'qwen') {
    const qwen = findQwenCode();
    if (!qwen) throw new Error('Qwen Code is not installed');
    const { child, found } = await startProcess(
      qwen.bin,
      [
        'serve',
        '--port',
        '0',
        '--workspace',
        sb.workspace,
        '--max-sessions',
        '0',
        '--max-connections',
        '0',
        '--no-web',
        '--max-pending-prompts-per-session',
        '0',
      ],
      {
        cwd: sb.workspace,
        env: { ...env, QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' },
        ready: (text) => /listening on (http:\/\/[^\s]+)/.exec(text)?.[1] ?? null,
        timeoutMs: 120_000,
      },
    );
    return { child, url: found };
  }
  // mend-sync: the daemon's optimisations off (the paths before them); mend-queued: only the queued writer.
  const extra =
    subject === 'mend-sync'
      ? { MEND_APPEND_MODE: 'sync', MEND_SHELL_WORKERS: '0', MEND_ACCEPT_COPIES: '0', MEND_SSE_DIRECT: '0', MEND_OPENAI_TRANSPORT: 'sdk' }
      : subject === 'mend-queued'
        ? { MEND_SHELL_WORKERS: '0', MEND_ACCEPT_COPIES: '0' }
        : {};
  const profile = process.env['MEND_BENCH_CPU_PROF'] ? ['--cpu-prof', '--cpu-prof-dir', process.env['MEND_BENCH_CPU_PROF']] : [];
  const bin = subject === 'baseline' ? opts.baselineBin : mendBin;
  if (bin === undefined) throw new Error('the baseline subject needs --baseline-bin PATH (bin/mend.js of another build)');
  const { child, found } = await startProcess(process.execPath, [...profile, bin, 'serve', '--port', '0', '--root', sb.workspace], {
    cwd: sb.workspace,
    env: { ...env, MEND_HOME: join(sb.home, '.mend'), ...extra },
    ready: (text) => {
      const line = text.split('\n').find((l) => l.startsWith('{"type":"ready"'));
      return line ? (JSON.parse(line) as { url: string }).url : null;
    },
    timeoutMs: 60_000,
  });
  return { child, url: found };
}

async function runOne(subject: string, sessions: number, modelUrl: string, opts: DaemonLoadOptions): Promise<DaemonLoadRow> {
  const sb = sandbox();
  const { child, url } = await startSubject(subject, sb, modelUrl, opts);
  let peakKb = treeRssKb(child.pid!);
  const sampler = setInterval(() => (peakKb = Math.max(peakKb, treeRssKb(child.pid!))), 250);
  const started = performance.now();
  const outcomes: SessionOutcome[] = await Promise.all(
    Array.from({ length: sessions }, (_, index) =>
      driveSession(url, { cwd: sb.workspace, index, turns: TURNS, marker: sb.marker, turnTimeoutMs: opts.turnTimeoutMs, connections: opts.connections }),
    ),
  );
  const wallMs = performance.now() - started;
  clearInterval(sampler);
  peakKb = Math.max(peakKb, treeRssKb(child.pid!));
  const daemonHwm = hwmKb(child.pid!);
  const exit = await stopGroup(child);
  rmSync(sb.dir, { recursive: true, force: true });

  const turns = outcomes.flatMap((o) => o.turns);
  const errors = outcomes.flatMap((o) => o.errors);
  if (subject !== 'qwen' && exit !== 0) errors.push(`the daemon exited ${exit} on SIGTERM`);
  const completed = turns.length;
  return {
    subject,
    sessions,
    turns: sessions * TURNS,
    completedTurns: completed,
    wallMs: Math.round(wallMs),
    turnsPerSecond: Math.round((completed / (wallMs / 1000)) * 10) / 10,
    firstEvent: spread(turns.map((t) => t.firstEventMs)),
    turnEnd: spread(turns.map((t) => t.endMs)),
    phases: {
      create: spread(outcomes.flatMap((o) => (o.phases.createMs !== undefined ? [o.phases.createMs] : []))),
      subscribe: spread(outcomes.flatMap((o) => (o.phases.subscribeMs !== undefined ? [o.phases.subscribeMs] : []))),
      close: spread(outcomes.flatMap((o) => (o.phases.closeMs !== undefined ? [o.phases.closeMs] : []))),
      // Turn 0's prompt follows the create; turn 1's comes while other sessions' turns run.
      firstEventByTurn: Array.from({ length: TURNS }, (_, turn) => spread(outcomes.flatMap((o) => (o.turns[turn] ? [o.turns[turn].firstEventMs] : [])))),
    },
    peakRssMb: Math.round(peakKb / 1024),
    daemonHwmMb: Math.round(daemonHwm / 1024),
    errors: errors.length,
    errorSamples: [...new Set(errors)].slice(0, 5),
  };
}

export function formatRow(r: DaemonLoadRow): string {
  const s = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms} ms`);
  return `| ${r.subject} | ${r.sessions} | ${r.completedTurns}/${r.turns} | ${(r.wallMs / 1000).toFixed(1)} s | ${r.turnsPerSecond} | ${s(r.firstEvent.p50)} / ${s(r.firstEvent.p99)} | ${s(r.turnEnd.p50)} / ${s(r.turnEnd.p99)} | ${r.peakRssMb} MB (daemon ${r.daemonHwmMb} MB) | ${r.errors} |`;
}

export function formatPhases(r: DaemonLoadRow): string {
  const s = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms} ms`);
  const p = (x: Spread) => `${s(x.p50)} / ${s(x.p99)}`;
  return `  ${r.subject} at ${r.sessions}: create ${p(r.phases.create)}, subscribe ${p(r.phases.subscribe)}, close ${p(r.phases.close)}, first event ${r.phases.firstEventByTurn.map((x, turn) => `turn ${turn} ${p(x)}`).join(', ')} (p50 / p99)`;
}

export const TABLE_HEAD =
  '| subject | sessions | turns done | wall | turns/s | first event p50 / p99 | turn end p50 / p99 | peak RSS (tree) | errors |\n|---|---|---|---|---|---|---|---|---|';

export async function runDaemonLoad(opts: DaemonLoadOptions): Promise<DaemonLoadRow[]> {
  const qwen = opts.subjects.includes('qwen') ? findQwenCode() : null;
  if (opts.subjects.includes('qwen') && !qwen)
    opts.log(`daemon load: Qwen Code ${QWEN_CODE_VERSION} not found (QWEN_CODE_BIN or qwen on PATH): its rows are left out`);
  if (opts.subjects.includes('baseline') && opts.baselineBin === undefined)
    opts.log('daemon load: no --baseline-bin (or MEND_BASELINE_BIN): the baseline rows are left out');
  const model = await startProcess(process.execPath, [modelJs], {
    cwd: root,
    env: { PATH: process.env['PATH'] },
    ready: (text) => {
      const line = text.split('\n').find((l) => l.startsWith('{"url"'));
      return line ? (JSON.parse(line) as { url: string }).url : null;
    },
    timeoutMs: 30_000,
  });
  const rows: DaemonLoadRow[] = [];
  try {
    for (const sessions of opts.sessions) {
      // Repetitions at the target's N alternate the subjects, so that a slow spell of a
      // shared machine lands on all of them; the check takes the median of the per-round ratios.
      const rounds = sessions === TARGET_SESSIONS ? opts.reps : 1;
      for (let round = 0; round < rounds; round++)
        for (const subject of opts.subjects) {
          if (subject === 'qwen' && (!qwen || sessions > opts.qwenMax || round > 0)) continue;
          if (subject === 'baseline' && opts.baselineBin === undefined) continue;
          opts.log(`daemon load: ${subject} at ${sessions} sessions${rounds > 1 ? ` (round ${round + 1} of ${rounds})` : ''} ...`);
          const row = { ...(await runOne(subject, sessions, model.found, opts)), round };
          rows.push(row);
          opts.log(TABLE_HEAD.split('\n')[0]!);
          opts.log(formatRow(row));
          opts.log(formatPhases(row));
          for (const e of row.errorSamples) opts.log(`  error: ${e}`);
        }
    }
  } finally {
    await stopGroup(model.child);
  }
  return rows;
}

export interface DaemonTargetCheck {
  name: string;
  value: string;
  ok: boolean;
}

/** The daemon's targets, from rows of one run: at 200 sessions, medians over the rounds. */
export function checkDaemonTargets(rows: DaemonLoadRow[]): DaemonTargetCheck[] {
  const atN = (subject: string, n: number) => rows.filter((r) => r.subject === subject && r.sessions === n);
  const median = (values: number[]): number => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length === 0
      ? NaN
      : sorted.length % 2 === 1
        ? sorted[sorted.length >> 1]!
        : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  };
  const checks: DaemonTargetCheck[] = [];
  const fast = atN('mend', TARGET_SESSIONS);
  if (fast.length > 0) {
    const p99 = median(fast.map((r) => r.firstEvent.p99));
    checks.push({
      name: `p99 time to first event at ${TARGET_SESSIONS} sessions < 1 s (median of ${fast.length} rounds)`,
      value: `${Math.round(p99)} ms (rounds: ${fast.map((r) => r.firstEvent.p99).join(', ')} ms)`,
      ok: p99 < 1000 && fast.every((r) => r.errors === 0),
    });
  }
  const baseline = atN('baseline', TARGET_SESSIONS);
  const before = baseline.length > 0 ? baseline : atN('mend-sync', TARGET_SESSIONS);
  if (fast.length > 0 && before.length > 0) {
    // Per round: mend's turns/s over the reference's of the same round.
    const ratios = fast.flatMap((r) => {
      const ref = before.find((b) => b.round === r.round);
      return ref ? [r.turnsPerSecond / ref.turnsPerSecond] : [];
    });
    const ratio = median(ratios);
    checks.push({
      name: `turns/s at ${TARGET_SESSIONS} sessions >= 2x ${before[0]!.subject === 'baseline' ? "the baseline's (the daemon before)" : 'the synchronous path'} (median of per-round ratios)`,
      value: `${ratio.toFixed(2)}x (rounds: ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
      ok: ratio >= 2,
    });
  }
  const big = atN('mend', 1000)[0];
  if (big)
    checks.push({
      name: '1,000 sessions without errors',
      value: `${big.errors} errors, ${big.completedTurns}/${big.turns} turns`,
      ok: big.errors === 0 && big.completedTurns === big.turns,
    });
  return checks;
}

/** The daemon bench with its command-line options (also `npm run bench -- --daemon ...`). */
export async function daemonBenchMain(argv: string[]): Promise<void> {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const opts: DaemonLoadOptions = {
    sessions: (value('--sessions') ?? '50,200,1000').split(',').map(Number),
    subjects: (value('--subjects') ?? 'baseline,mend-sync,mend,qwen').split(','),
    qwenMax: Number(value('--qwen-max') ?? 200),
    turnTimeoutMs: Number(value('--turn-timeout-ms') ?? 300_000),
    connections: argv.includes('--fresh-connections') ? 'fresh' : 'kept',
    reps: Math.max(1, Number(value('--reps') ?? 3)),
    baselineBin: value('--baseline-bin') ?? process.env['MEND_BASELINE_BIN'],
    log,
  };
  const rows = await runDaemonLoad(opts);
  process.stdout.write(`\n${TABLE_HEAD}\n${rows.map(formatRow).join('\n')}\n`);
  const checks = checkDaemonTargets(rows);
  for (const c of checks) process.stdout.write(`${c.ok ? 'ok  ' : 'MISS'} ${c.name}: ${c.value}\n`);
  const jsonOut = value('--json') ?? join(root, '.bench', 'daemon-load.json');
  mkdirSync(dirname(jsonOut), { recursive: true });
  writeFileSync(jsonOut, JSON.stringify({ when: new Date().toISOString(), rows, checks }, null, 2));
  if (argv.includes('--check') && checks.some((c) => !c.ok)) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await daemonBenchMain(process.argv.slice(2));
