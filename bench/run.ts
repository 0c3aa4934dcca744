/**
 * `npm run bench`: load+plan and start-up benchmarks of mend, every figure a
 * ratio against a baseline measured in the same run (the machine may be shared
 * and busy; absolute numbers are printed for context only).
 *
 *   node dist/bench/run.js [--check] [--reps N] [--quick] [--json FILE]
 *
 * --check   exit 1 when a target is missed (default: report and exit 0)
 * --reps N  repetitions per measurement (default and minimum 5; files under 64 MB get
 *           at least 9, start-up at least 11); ratios are medians of per-run ratios
 * --quick   skip the 100 MB and 1M-record sessions (for development)
 * --json    also write all raw measurements to FILE (default .bench/results.json)
 * --worst-only  only the linear-scaling worst cases (many calls in one turn, many fragments)
 * --large   also the 1M-record Qwen-format session (865 MB, generated into the temp
 *           directory and deleted afterwards); --check implies it
 * --qwen-only   only start-up and the Qwen-format sessions (the cold-path targets)
 * --daemon      only the daemon under load (bench/daemon-load.ts, its options follow;
 *               also `npm run bench:daemon`)
 *
 * See docs/performance.md for the method, the targets and the latest figures.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, linkSync, mkdtempSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ensureSession, type GeneratedSession, type SessionSpec } from './generate.js';
import { ensureQwenSession, type QwenSession } from './qwen-session.js';
import { findQwenCode, qwenCodeTiming } from './qwen-code.js';
import { planManyCalls, readManyFragments, type ScalingFigure } from './worst-cases.js';
import { clearCheckpoints, measureAppend, measureWarm, type AppendFigures, type SpawnRecovery, type WarmFigures } from './warm-resume.js';
import { sessionLogPath } from '../src/session/session-paths.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const benchDir = join(root, '.bench');
const childJs = join(here, 'child.js');
const traceRegister = join(here, 'trace-register.js');
const mendBin = join(root, 'bin', 'mend.js');
const floorProcessJs = join(here, 'floor-process.js');
const indexProcessJs = join(here, 'index-process.js');
const turnProcessJs = join(here, 'turn-process.js');
const listProcessJs = join(here, 'list-process.js');
const MB = 2 ** 20;

// ---- options ------------------------------------------------------------------------------

const argv = process.argv.slice(2);
const flag = (name: string): boolean => argv.includes(name);
const value = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const CHECK = flag('--check');
const QUICK = flag('--quick');
const REPS = Math.max(5, Number(value('--reps') ?? 5) || 5);
const STARTUP_REPS = Math.max(11, REPS);
const JSON_OUT = value('--json') ?? join(benchDir, 'results.json');
const WORST_ONLY = flag('--worst-only');
const QWEN_ONLY = flag('--qwen-only');
const LISTING_ONLY = flag('--listing-only');
const LARGE = flag('--large') || CHECK;
if (flag('--daemon')) {
  const { daemonBenchMain } = await import('./daemon-load.js');
  await daemonBenchMain(argv.filter((a) => a !== '--daemon'));
  process.exit(process.exitCode ?? 0);
}

// ---- targets --------------------------------------------------------------------------------

const TARGET = {
  loadPlanTime: 1.5,
  loadPlanRss: 1.5,
  /**
   * Cost per MB (per record) at the larger size over the smaller one, relative to
   * the floor's own change (1.0: load+plan grows exactly like reading does).
   */
  growth: 1.25,
  /** Issue 11: spawn -> system/init on a tiny session, against `node -e 0`. */
  startup: 2,
  cliRecovery: 1.5,
  /**
   * Time at 10x the size over time at 1x, for the linear-scaling worst cases (many calls in
   * one model entry, one record in many fragments): about 10 when linear, about 100 when
   * quadratic. The margin above 10 absorbs GC and cache effects on a shared machine.
   */
  worstCaseScaling: 20,
  /** Plan checkpoints: a warm resume of a 100k- and a 1M-record session against one of a 10-record session. */
  warmResume: 1.2,
  /** Plan checkpoints: a turn whose end refreshes the checkpoint, against one with checkpoints off. */
  turnWithCheckpoint: 1.05,
  /** Plan checkpoints: 1,000 sessions of 10k records listed with kinds, warm, in seconds (the ratio column is seconds). */
  listWarmSeconds: 1,
  /**
   * Issue 11, on the Qwen-format sessions: spawn -> system/recovery against the floor
   * process (64 KiB blocks, JSON.parse every line, keep nothing) at 100k records, or 10x
   * faster than Qwen Code 0.24.4 when it is installed; peak RSS against the file size.
   */
  qwenRecovery: 1.5,
  qwenVsQwenCode: 0.1,
  qwenRss100k: 1.5,
  qwenRss1m: 0.25,
  /** Per-record cost at 1M over the cost at 100k. */
  qwenLinear: 1.25,
  /**
   * Issue 11: continuing a large session reads it whole, as before (`histories: 'eager'`):
   * that load + plan against the in-process floor, as the load+plan rows.
   */
  qwenContinue: 1.5,
};
/** The 1M-record run must also work with this old-space limit (MB). */
const SMALL_HEAP_MB = 512;
const HEAVY_PACKAGES = ['openai', 'execa'];

// ---- small helpers ----------------------------------------------------------------------------

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const fmt = (n: number, d = 2): string => n.toFixed(d);
const ms = (n: number): string => (n >= 1000 ? `${fmt(n / 1000, 2)} s` : `${fmt(n, 0)} ms`);
const mb = (kb: number): string => `${fmt(kb / 1024, 0)} MB`;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

interface ChildResult {
  mode: string;
  wallMs: number;
  cpuMs: number;
  gcMs: number;
  maxRssKb: number;
  /** Spawn to exit, measured by this process. */
  processMs: number;
  records?: number;
  loadMs?: number;
  planMs?: number;
  planId?: string;
  kind?: string;
}

function runChild(mode: string, file: string): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [childJs, mode, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    let processMs = NaN;
    child.on('exit', () => (processMs = performance.now() - t0));
    // 'close' comes after 'exit' and after stdout has ended.
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child ${mode} ${file} exited ${code}: ${err}`));
      try {
        resolvePromise({ ...(JSON.parse(out.trim().split('\n').at(-1)!) as ChildResult), processMs });
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** CPU time (ms) and peak RSS (KB) of a live process, from /proc (Linux). */
function procStats(pid: number): { cpuMs: number; maxRssKb: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11], [12] are utime and stime (fields 14 and 15 of proc(5)), in clock ticks (100 Hz).
    const cpuMs = (Number(fields[11]) + Number(fields[12])) * 10;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuMs, maxRssKb: hwm ? Number(hwm[1]) : NaN };
  } catch {
    return null;
  }
}

interface SpawnTiming {
  /** Spawn to the awaited stdout line (or to exit when no line is awaited). */
  ms: number;
  cpuMs: number;
  maxRssKb: number;
  line?: Record<string, unknown>;
  /** The first stdout line as text (commands that are not mend's). */
  text?: string;
}

/**
 * Spawns `args`; resolves with the time from spawn to the first stdout line for
 * which `match` is true (and /proc figures at that moment), after the process exits.
 */
function timeSpawn(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; match?: (line: Record<string, unknown>) => boolean }): Promise<SpawnTiming> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let found: SpawnTiming | undefined;
    let buffer = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (found || !opts.match) return;
      buffer += d;
      let nl: number;
      while (!found && (nl = buffer.indexOf('\n')) !== -1) {
        const text = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (opts.match(parsed)) {
          const at = performance.now() - t0;
          const stats = procStats(child.pid!) ?? { cpuMs: NaN, maxRssKb: NaN };
          found = { ms: at, ...stats, line: parsed };
        }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      const at = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${err}`));
      if (opts.match && !found) return reject(new Error(`${args.join(' ')}: the awaited line never came`));
      resolvePromise(found ?? { ms: at, cpuMs: NaN, maxRssKb: NaN });
    });
  });
}

// ---- the benchmark ------------------------------------------------------------------------------

interface Row {
  section: string;
  name: string;
  /** mend's figure(s) and the baseline's, as shown. */
  value: string;
  baseline: string;
  /** Ratios to the baseline: wall time (or the only ratio) and CPU time. */
  wall: number | null;
  cpu: number | null;
  target: string;
  ok: boolean | null;
}

const rows: Row[] = [];
const raw: Record<string, unknown> = {};

function addRow(r: Omit<Row, 'ok' | 'target'> & { target?: number | string }): void {
  const limit = typeof r.target === 'number' ? r.target : null;
  const ratios = [r.wall, r.cpu].filter((x): x is number => x !== null);
  rows.push({
    ...r,
    target: limit !== null ? `<= ${limit}x` : typeof r.target === 'string' ? r.target : 'info',
    ok: limit === null ? null : ratios.every((x) => x <= limit),
  });
}

/** Median of per-repetition ratios a[i] / b[i]: each pair ran back to back, so slow drifts in load cancel. */
function pairedRatio(a: number[], b: number[]): number {
  return median(a.map((x, i) => x / b[i]!));
}

const SESSIONS: SessionSpec[] = [
  { label: 'large-10mb', profile: 'large', targetBytes: 10 * MB, seed: 10 },
  { label: 'large-100mb', profile: 'large', targetBytes: 100 * MB, seed: 100 },
  { label: 'small-100k', profile: 'small', records: 100_000, seed: 1e5 },
  { label: 'small-1m', profile: 'small', records: 1_000_000, seed: 1e6 },
];

interface FileStats {
  session: GeneratedSession;
  floor: ChildResult[];
  read: ChildResult[];
  loadplan: ChildResult[];
  cli: SpawnTiming[];
}

type Key = 'wallMs' | 'cpuMs' | 'maxRssKb' | 'processMs' | 'gcMs' | 'ms' | 'loadMs' | 'planMs';
const col = (rs: Array<ChildResult | SpawnTiming>, key: Key): number[] => rs.map((r) => (r as unknown as Record<string, number>)[key] ?? NaN);
const med = (rs: Array<ChildResult | SpawnTiming>, key: Key): number => median(col(rs, key));

async function measureFile(session: GeneratedSession, withCli: boolean, env: { home: string; project: string }): Promise<FileStats> {
  const stats: FileStats = { session, floor: [], read: [], loadplan: [], cli: [] };
  // The smaller files are cheap: more repetitions steady their medians.
  const reps = session.bytes < 64 * MB ? Math.max(REPS, 9) : REPS;
  const withRead = session.bytes < 200 * MB;
  for (let rep = 0; rep < reps; rep++) {
    // The floor and what is compared with it run back to back, in alternating order.
    const pair: Array<() => Promise<void>> = [
      async () => void stats.floor.push(await runChild('floor', session.path)),
      async () => void stats.loadplan.push(await runChild('loadplan', session.path)),
    ];
    if (rep % 2 === 1) pair.reverse();
    for (const step of pair) await step();
    if (withRead) stats.read.push(await runChild('read', session.path));
    if (withCli) {
      // Cold: no plan checkpoint from an earlier repetition.
      clearCheckpoints(env.home);
      stats.cli.push(
        await timeSpawn([mendBin, '--resume', session.path, '-o', 'stream-json'], {
          cwd: env.project,
          env: { ...process.env, MEND_HOME: env.home },
          match: (l) => l['type'] === 'system' && l['subtype'] === 'recovery',
        }),
      );
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  const planIds = new Set(stats.loadplan.map((r) => r.planId));
  for (const c of stats.cli) planIds.add(c.line?.['plan_id'] as string);
  if (planIds.size !== 1) throw new Error(`${session.spec.label}: plan ids differ between runs: ${[...planIds].join(', ')}`);
  return stats;
}

function reportFile(s: FileStats): void {
  const label = s.session.spec.label;
  const size = `${fmt(s.session.bytes / MB, 0)} MB, ${s.session.records.toLocaleString('en')} rec, ${s.loadplan.length} runs`;
  const { floor, loadplan, read } = s;
  addRow({
    section: 'load+plan',
    name: `${label} (${size})`,
    value: `${ms(med(loadplan, 'wallMs'))} / cpu ${ms(med(loadplan, 'cpuMs'))}`,
    baseline: `${ms(med(floor, 'wallMs'))} / cpu ${ms(med(floor, 'cpuMs'))}`,
    wall: pairedRatio(col(loadplan, 'wallMs'), col(floor, 'wallMs')),
    cpu: pairedRatio(col(loadplan, 'cpuMs'), col(floor, 'cpuMs')),
    target: TARGET.loadPlanTime,
  });
  addRow({
    section: 'load+plan',
    name: `${label} peak RSS`,
    value: mb(med(loadplan, 'maxRssKb')),
    baseline: mb(med(floor, 'maxRssKb')),
    wall: pairedRatio(col(loadplan, 'maxRssKb'), col(floor, 'maxRssKb')),
    cpu: null,
    target: TARGET.loadPlanRss,
  });
  addRow({
    section: 'load+plan',
    name: `${label} split: load, plan (wall); GC`,
    value: `${ms(med(loadplan, 'loadMs'))}, ${ms(med(loadplan, 'planMs'))}; GC ${ms(med(loadplan, 'gcMs'))}`,
    baseline: `GC ${ms(med(floor, 'gcMs'))}`,
    wall: null,
    cpu: null,
  });
  if (read.length > 0) {
    // Runs after each pair, so it is compared with the medians rather than pairwise.
    addRow({
      section: 'load+plan',
      name: `${label} read only (readSessionLog)`,
      value: `${ms(med(read, 'wallMs'))} / cpu ${ms(med(read, 'cpuMs'))}`,
      baseline: 'floor',
      wall: med(read, 'wallMs') / med(floor, 'wallMs'),
      cpu: med(read, 'cpuMs') / med(floor, 'cpuMs'),
    });
  }
  if (s.cli.length > 0) {
    addRow({
      section: 'cli',
      name: `${label}: spawn -> system/recovery`,
      value: `${ms(med(s.cli, 'ms'))} / cpu ${ms(med(s.cli, 'cpuMs'))}, ${mb(med(s.cli, 'maxRssKb'))}`,
      baseline: `floor process ${ms(med(floor, 'processMs'))}`,
      wall: pairedRatio(col(s.cli, 'ms'), col(floor, 'processMs')),
      cpu: null,
      target: TARGET.cliRecovery,
    });
  }
}

function growthRow(small: FileStats, large: FileStats, unit: 'MB' | 'rec'): void {
  const size = (s: FileStats): number => (unit === 'MB' ? s.session.bytes / MB : s.session.records);
  const per = (s: FileStats, mode: 'floor' | 'loadplan', key: 'wallMs' | 'cpuMs'): number => med(s[mode], key) / size(s);
  const show = (v: number): string => (unit === 'MB' ? `${fmt(v, 1)} ms/MB` : `${fmt(v * 1000, 2)} us/rec`);
  const growth = (mode: 'floor' | 'loadplan', key: 'wallMs' | 'cpuMs'): number => per(large, mode, key) / per(small, mode, key);
  addRow({
    section: 'growth',
    name: `${small.session.spec.label} -> ${large.session.spec.label}, cost per ${unit === 'MB' ? 'MB' : 'record'}`,
    value: `${show(per(small, 'loadplan', 'wallMs'))} -> ${show(per(large, 'loadplan', 'wallMs'))} (x${fmt(growth('loadplan', 'wallMs'))}; cpu x${fmt(growth('loadplan', 'cpuMs'))})`,
    baseline: `floor x${fmt(growth('floor', 'wallMs'))}; cpu x${fmt(growth('floor', 'cpuMs'))}`,
    // Relative to the floor's own growth (GC makes that slightly superlinear too).
    wall: growth('loadplan', 'wallMs') / growth('floor', 'wallMs'),
    cpu: growth('loadplan', 'cpuMs') / growth('floor', 'cpuMs'),
    target: TARGET.growth,
  });
}

async function startup(env: { home: string; project: string }): Promise<void> {
  // A tiny interrupted session under MEND_HOME, resumed by id.
  const sessionId = '0b5e7c1a-2d4f-4e6a-9b8c-7d6e5f4a3b2c';
  const path = sessionLogPath(env.home, realpathSync(env.project), sessionId);
  mkdirSync(dirname(path), { recursive: true });
  const base = { sessionId, timestamp: '2026-01-05T09:00:00.000Z', cwd: env.project, version: 'mend/0.1.0' };
  const records = [
    { ...base, uuid: 'u1', parentUuid: null, type: 'user', provenance: 'real_user', message: { role: 'user', parts: [{ text: 'list the files' }] } },
    {
      ...base,
      uuid: 'a1',
      parentUuid: 'u1',
      type: 'assistant',
      provenance: 'assistant_output',
      model: 'm',
      message: { role: 'model', parts: [{ text: 'Listing.' }, { functionCall: { id: 'c1', name: 'run_shell_command', args: { command: 'ls' } } }] },
    },
  ];
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));

  const mendArgs = [mendBin, '--resume', sessionId, '-o', 'stream-json'];
  const mendEnv = { ...process.env, MEND_HOME: env.home };
  const isInit = (l: Record<string, unknown>): boolean => l['type'] === 'system' && l['subtype'] === 'init';

  // CPU of whole processes via a CommonJS preload (no ESM loader for `node -e 0`), in separate runs
  // so that the wall-time runs carry no instrumentation.
  const reporter = join(benchDir, 'cpu-reporter.cjs');
  const cpuOut = join(env.home, 'cpu.json');
  writeFileSync(
    reporter,
    "process.on('exit', () => { const c = process.cpuUsage(); require('node:fs').writeFileSync(process.env.BENCH_CPU_OUT, JSON.stringify({ cpuMs: (c.user + c.system) / 1000, maxRssKb: process.resourceUsage().maxRSS })); });\n",
  );
  const cpuOf = async (args: string[], envv: NodeJS.ProcessEnv): Promise<{ cpuMs: number; maxRssKb: number }> => {
    await timeSpawn(['-r', reporter, ...args], { cwd: env.project, env: { ...envv, BENCH_CPU_OUT: cpuOut } });
    return JSON.parse(readFileSync(cpuOut, 'utf8')) as { cpuMs: number; maxRssKb: number };
  };

  const bare: number[] = [];
  const mend: number[] = [];
  const bareCpu: Array<{ cpuMs: number; maxRssKb: number }> = [];
  const mendCpu: Array<{ cpuMs: number; maxRssKb: number }> = [];
  for (let rep = 0; rep < STARTUP_REPS; rep++) {
    // Pairs back to back, in alternating order.
    const wall = [
      async () => void bare.push((await timeSpawn(['-e', '0'], {})).ms),
      async () => void mend.push((await timeSpawn(mendArgs, { cwd: env.project, env: mendEnv, match: isInit })).ms),
    ];
    const cpu = [async () => void bareCpu.push(await cpuOf(['-e', '0'], process.env)), async () => void mendCpu.push(await cpuOf(mendArgs, mendEnv))];
    if (rep % 2 === 1) (wall.reverse(), cpu.reverse());
    for (const step of [...wall, ...cpu]) await step();
  }
  const cpuMs = (xs: typeof bareCpu): number[] => xs.map((c) => c.cpuMs);
  const rssKb = (xs: typeof bareCpu): number[] => xs.map((c) => c.maxRssKb);
  addRow({
    section: 'cli',
    name: `tiny resume: spawn -> system/init (${STARTUP_REPS} runs)`,
    value: `${ms(median(mend))} / cpu ${ms(median(cpuMs(mendCpu)))}, ${mb(median(rssKb(mendCpu)))}`,
    baseline: `node -e 0: ${ms(median(bare))} / cpu ${ms(median(cpuMs(bareCpu)))}, ${mb(median(rssKb(bareCpu)))}`,
    wall: pairedRatio(mend, bare),
    cpu: pairedRatio(cpuMs(mendCpu), cpuMs(bareCpu)),
    target: TARGET.startup,
  });
  raw['startup'] = { bareMs: bare, mendInitMs: mend, bareCpu, mendCpu };

  // Which modules the resume path loads: ESM through a resolve hook, CommonJS through NODE_DEBUG=module.
  const traceOut = join(env.home, 'trace.txt');
  rmSync(traceOut, { force: true });
  const traced = await new Promise<{ stderr: string }>((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', traceRegister, ...mendArgs], {
      cwd: env.project,
      env: { ...mendEnv, BENCH_TRACE_OUT: traceOut, NODE_DEBUG: 'module' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolvePromise({ stderr }) : reject(new Error(`traced run exited ${code}: ${stderr}`))));
  });
  // The hook sees every resolution; a module resolved from several importers counts once.
  const urls = [...new Set(readFileSync(traceOut, 'utf8').split('\n').filter(Boolean))];
  const cjs = [...traced.stderr.matchAll(/^MODULE \d+: (?:load|looking for) "?([^"\n]+)"?/gm)].map((x) => x[1]!);
  const packages = new Set<string>();
  for (const u of [...urls, ...cjs]) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
    if (match) packages.add(match[1]!);
  }
  const own = urls.filter((u) => u.startsWith('file:') && !u.includes('node_modules')).length;
  const perPackage = new Map<string, number>();
  for (const u of urls) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
    if (match) perPackage.set(match[1]!, (perPackage.get(match[1]!) ?? 0) + 1);
  }
  const heavy = HEAVY_PACKAGES.filter((p) => packages.has(p));
  rows.push({
    section: 'cli',
    name: 'tiny resume: modules loaded',
    // bin/mend.js is CommonJS and runs the bundle through vm.Script: the bundle is one script, not a module here.
    value: `${urls.length} ESM (${own} mend, ${urls.filter((u) => u.startsWith('node:')).length} built-in) + ${new Set(cjs.filter((c) => !c.startsWith('node:'))).size} CommonJS modules; ${[
      ...packages,
    ]
      .sort()
      .map((p) => ((perPackage.get(p) ?? 0) > 5 ? `${p} (${perPackage.get(p)})` : p))
      .join(' ')}`,
    baseline: '',
    wall: null,
    cpu: null,
    target: `no ${HEAVY_PACKAGES.join(', ')}`,
    ok: heavy.length === 0,
  });
  raw['modules'] = { urls, cjs, packages: [...packages], heavy };
}

// ---- Qwen-format sessions ------------------------------------------------------

interface QwenFigures {
  session: QwenSession;
  floor: SpawnTiming[];
  mend: SpawnTiming[];
  /** At 100k: mend with the outline pass forced onto two threads (MEND_OUTLINE_THREADS=2), whatever the CPU count. */
  mendTwoThreads: SpawnTiming[];
  /** The outline pass alone (readSessionOutline) in a whole process. */
  index: SpawnTiming[];
  qwenCode: SpawnTiming[];
  /** In-process, at 100k: the floor (parse and keep), the full load a continuation does, and on-demand histories. */
  floorKeep: ChildResult[];
  fullLoad: ChildResult[];
  continuePath: ChildResult[];
  smallHeap?: { ok: boolean; ms: number; maxRssKb: number; error?: string };
}

/** Spawn -> first stdout line of any command (Qwen Code is not a node script of ours). */
function timeCommand(bin: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<SpawnTiming> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let found: SpawnTiming | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      if (found) return;
      found = { ms: performance.now() - t0, ...(procStats(child.pid!) ?? { cpuMs: NaN, maxRssKb: NaN }), text: chunk.toString('utf8').split('\n')[0] };
      child.kill('SIGTERM');
    });
    child.on('error', reject);
    child.on('exit', (code) => (found ? resolvePromise(found) : reject(new Error(`${bin} exited ${code} before printing anything`))));
  });
}

async function measureQwen(session: QwenSession, reps: number, env: { home: string; project: string }, smallHeap: boolean): Promise<QwenFigures> {
  const figures: QwenFigures = { session, floor: [], mend: [], mendTwoThreads: [], index: [], qwenCode: [], floorKeep: [], fullLoad: [], continuePath: [] };
  const isRecovery = (l: Record<string, unknown>): boolean => l['type'] === 'system' && l['subtype'] === 'recovery';
  const mendEnv = { ...process.env, MEND_HOME: env.home };
  const qwen = findQwenCode();
  for (let rep = 0; rep < reps; rep++) {
    const steps: Array<() => Promise<void>> = [
      async () => void figures.floor.push(await timeSpawn([floorProcessJs, session.path], { match: (l) => 'lines' in l })),
      async () => {
        // Cold: no plan checkpoint from an earlier repetition (the resume writes one, as a first read does).
        clearCheckpoints(env.home);
        figures.mend.push(await timeSpawn([mendBin, '--resume', session.path, '-o', 'stream-json'], { cwd: env.project, env: mendEnv, match: isRecovery }));
      },
      async () => void figures.index.push(await timeSpawn([indexProcessJs, session.path], { match: (l) => 'entries' in l })),
    ];
    if (qwen) {
      const q = qwenCodeTiming(env.home, session.path, session.sessionId);
      steps.push(async () => {
        const t = await timeCommand(qwen.bin, q.args, { cwd: q.cwd, env: q.env });
        // Its first line must be about this session (its result once the session is loaded), or the time says nothing.
        let sessionId: unknown;
        try {
          sessionId = (JSON.parse(t.text ?? '') as { session_id?: unknown }).session_id;
        } catch {
          sessionId = undefined;
        }
        if (sessionId !== session.sessionId)
          throw new Error(`Qwen Code did not answer for the session: its first line was ${JSON.stringify(t.text?.slice(0, 300))}`);
        figures.qwenCode.push(t);
      });
    }
    if (!smallHeap) {
      // The other choice of outline-env.ts's rule, for the machine at hand (info: the CLI
      // uses the worker by default only with four CPUs or more).
      steps.push(async () => clearCheckpoints(env.home));
      steps.push(
        async () =>
          void figures.mendTwoThreads.push(
            await timeSpawn([mendBin, '--resume', session.path, '-o', 'stream-json'], {
              cwd: env.project,
              env: { ...mendEnv, MEND_OUTLINE_THREADS: '2' },
              match: isRecovery,
            }),
          ),
      );
      // What a continuing run does (in-process, modules loaded first), at 100k only: the full load
      // against the floor, and on-demand histories against the full load.
      steps.push(async () => void figures.floorKeep.push(await runChild('floor', session.path)));
      steps.push(async () => void figures.fullLoad.push(await runChild('loadplan', session.path)));
      steps.push(async () => void figures.continuePath.push(await runChild('continue', session.path)));
    }
    if (rep % 2 === 1) steps.reverse();
    for (const step of steps) await step();
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  if (smallHeap) {
    clearCheckpoints(env.home);
    try {
      const t = await timeSpawn([`--max-old-space-size=${SMALL_HEAP_MB}`, mendBin, '--resume', session.path, '-o', 'stream-json'], {
        cwd: env.project,
        env: mendEnv,
        match: isRecovery,
      });
      figures.smallHeap = { ok: true, ms: t.ms, maxRssKb: t.maxRssKb };
    } catch (error) {
      figures.smallHeap = { ok: false, ms: NaN, maxRssKb: NaN, error: (error as Error).message.slice(0, 300) };
    }
  }
  const planIds = new Set([
    ...figures.mend.map((t) => t.line?.['plan_id']),
    ...figures.mendTwoThreads.map((t) => t.line?.['plan_id']),
    ...figures.continuePath.map((c) => c.planId),
    ...figures.fullLoad.map((c) => c.planId),
  ]);
  if (planIds.size !== 1) throw new Error(`${session.label}: plan ids differ between runs: ${[...planIds].join(', ')}`);
  return figures;
}

function reportQwen(small: QwenFigures, large: QwenFigures | null): void {
  for (const f of [small, large]) {
    if (f === null) continue;
    const label = `${f.session.label} (${fmt(f.session.bytes / MB, 0)} MB, ${f.session.records.toLocaleString('en')} rec, ${f.mend.length} runs)`;
    const fileKb = f.session.bytes / 1024;
    addRow({
      section: 'qwen-format',
      name: `${label}: mend spawn -> system/recovery`,
      value: `${ms(med(f.mend, 'ms'))} / cpu ${ms(med(f.mend, 'cpuMs'))}`,
      baseline: `floor process (64 KiB, parse all, keep none) ${ms(med(f.floor, 'ms'))}`,
      wall: pairedRatio(col(f.mend, 'ms'), col(f.floor, 'ms')),
      cpu: null,
      target: f === small && f.qwenCode.length === 0 ? TARGET.qwenRecovery : undefined,
    });
    if (f.mendTwoThreads.length > 0) {
      addRow({
        section: 'qwen-format',
        name: `${label}: the same on two threads (MEND_OUTLINE_THREADS=2), against one`,
        value: `${ms(med(f.mendTwoThreads, 'ms'))} / cpu ${ms(med(f.mendTwoThreads, 'cpuMs'))}, ${mb(med(f.mendTwoThreads, 'maxRssKb'))}`,
        baseline: `one thread ${ms(med(f.mend, 'ms'))}, ${mb(med(f.mend, 'maxRssKb'))}`,
        wall: pairedRatio(col(f.mendTwoThreads, 'ms'), col(f.mend, 'ms')),
        cpu: null,
      });
    }
    addRow({
      section: 'qwen-format',
      name: `${label}: outline pass alone (readSessionOutline), whole process`,
      value: `${ms(med(f.index, 'ms'))}, ${mb(med(f.index, 'maxRssKb'))} (${fmt(med(f.index, 'maxRssKb') / fileKb)}x the file)`,
      baseline: `floor process ${ms(med(f.floor, 'ms'))}`,
      wall: pairedRatio(col(f.index, 'ms'), col(f.floor, 'ms')),
      cpu: null,
    });
    if (f.fullLoad.length > 0) {
      addRow({
        section: 'qwen-format',
        name: `${label}: continuing (full load + plan, histories read at open), in-process`,
        value: `${ms(med(f.fullLoad, 'wallMs'))} / cpu ${ms(med(f.fullLoad, 'cpuMs'))}, ${mb(med(f.fullLoad, 'maxRssKb'))}`,
        baseline: `floor (parse and keep every line) ${ms(med(f.floorKeep, 'wallMs'))}, ${mb(med(f.floorKeep, 'maxRssKb'))}`,
        wall: pairedRatio(col(f.fullLoad, 'wallMs'), col(f.floorKeep, 'wallMs')),
        cpu: pairedRatio(col(f.fullLoad, 'cpuMs'), col(f.floorKeep, 'cpuMs')),
        target: TARGET.qwenContinue,
      });
      addRow({
        section: 'qwen-format',
        name: `${label}: plan from the outline first, then the histories by an explicit load, in-process`,
        value: `${ms(med(f.continuePath, 'wallMs'))}, ${mb(med(f.continuePath, 'maxRssKb'))}`,
        baseline: `full load + plan ${ms(med(f.fullLoad, 'wallMs'))}`,
        wall: pairedRatio(col(f.continuePath, 'wallMs'), col(f.fullLoad, 'wallMs')),
        cpu: pairedRatio(col(f.continuePath, 'cpuMs'), col(f.fullLoad, 'cpuMs')),
      });
    }
    if (f.qwenCode.length > 0) {
      addRow({
        section: 'qwen-format',
        name: `${label}: mend vs Qwen Code ${QWEN_CODE_LABEL} (first stdout line)`,
        value: ms(med(f.mend, 'ms')),
        baseline: `Qwen Code ${ms(med(f.qwenCode, 'ms'))}, ${mb(med(f.qwenCode, 'maxRssKb'))}`,
        wall: pairedRatio(col(f.mend, 'ms'), col(f.qwenCode, 'ms')),
        cpu: null,
        target: f === small ? TARGET.qwenVsQwenCode : undefined,
      });
      // Where a tenth of Qwen Code's time lies against the floor process: below 1x, no
      // reader that parses every line on one thread reaches it on this machine.
      addRow({
        section: 'qwen-format',
        name: `${label}: a tenth of Qwen Code's time, against the floor process`,
        value: ms(med(f.qwenCode, 'ms') / 10),
        baseline: `floor process ${ms(med(f.floor, 'ms'))}`,
        wall: pairedRatio(
          col(f.qwenCode, 'ms').map((t) => t / 10),
          col(f.floor, 'ms'),
        ),
        cpu: null,
      });
    }
    addRow({
      section: 'qwen-format',
      name: `${label}: mend peak RSS at system/recovery`,
      value: mb(med(f.mend, 'maxRssKb')),
      baseline: `file ${mb(fileKb)}; floor process ${mb(med(f.floor, 'maxRssKb'))}`,
      wall: med(f.mend, 'maxRssKb') / fileKb,
      cpu: null,
      target: f === small ? TARGET.qwenRss100k : TARGET.qwenRss1m,
    });
    if (f.smallHeap) {
      rows.push({
        section: 'qwen-format',
        name: `${label}: under --max-old-space-size=${SMALL_HEAP_MB}`,
        value: f.smallHeap.ok ? `system/recovery after ${ms(f.smallHeap.ms)}, ${mb(f.smallHeap.maxRssKb)}` : `failed: ${f.smallHeap.error ?? ''}`,
        baseline: '',
        wall: null,
        cpu: null,
        target: 'reaches system/recovery',
        ok: f.smallHeap.ok,
      });
    }
  }
  if (large) {
    const per = (f: QwenFigures, rs: SpawnTiming[]): number => med(rs, 'ms') / f.session.records;
    const growth = per(large, large.mend) / per(small, small.mend);
    const floorGrowth = per(large, large.floor) / per(small, small.floor);
    addRow({
      section: 'qwen-format',
      name: `${small.session.label} -> ${large.session.label}: mend cost per record`,
      value: `${fmt(per(small, small.mend) * 1000, 2)} -> ${fmt(per(large, large.mend) * 1000, 2)} us/rec (x${fmt(growth)})`,
      baseline: `floor process x${fmt(floorGrowth)}`,
      wall: growth,
      cpu: null,
      target: TARGET.qwenLinear,
    });
  }
}

const QWEN_CODE_LABEL = '0.24.4';

async function qwenFormat(env: { home: string; project: string }): Promise<void> {
  const qwen = findQwenCode();
  log(qwen ? `Qwen Code found: ${qwen.bin} (${qwen.version})` : 'Qwen Code 0.24.4 not installed: mend is compared with the floor process only');
  const t = performance.now();
  const small = ensureQwenSession(join(benchDir, 'qwen-100k'), 'qwen-100k', 100_000, 11e4);
  log(
    `${small.reused ? 'reusing' : 'generated'} ${relative(root, small.path)}: ${fmt(small.bytes / MB, 1)} MB (${fmt(small.bytes / small.records, 0)} B/record)${small.reused ? '' : ` (${ms(performance.now() - t)})`}`,
  );
  log('qwen-format 100k');
  const smallFigures = await measureQwen(small, Math.max(REPS, 5), env, false);
  const tiny = ensureQwenSession(join(benchDir, 'qwen-10'), 'qwen-10', 10, 7);
  const warmReps = Math.max(REPS, 9);
  log('warm resume: 10 and 100k records (plan checkpoints on and off)');
  const warm = await measureWarm([tiny, small], warmReps, env.home, spawnRecovery(env));
  log('resume after an appended turn, and cold (100k records)');
  const appendDir = mkdtempSync(join(tmpdir(), 'mend-bench-append-'));
  let append: AppendFigures;
  try {
    append = await measureAppend(small, warmReps, env.home, appendDir, spawnRecovery(env));
  } finally {
    rmSync(appendDir, { recursive: true, force: true });
  }
  log('turns on the 100k-record session, plan checkpoints refreshed after each turn and off');
  const turns = await measureTurns(small, env.home);
  let warmLarge: WarmFigures | null = null;
  let largeFigures: QwenFigures | null = null;
  if (LARGE) {
    // 865 MB: generated into the temp directory, measured, deleted.
    const dir = mkdtempSync(join(tmpdir(), 'mend-bench-qwen-1m-'));
    try {
      const t1 = performance.now();
      const large = ensureQwenSession(dir, 'qwen-1m', 1_000_000, 11e5);
      log(`generated ${large.path}: ${fmt(large.bytes / MB, 1)} MB (${ms(performance.now() - t1)})`);
      log('qwen-format 1M');
      largeFigures = await measureQwen(large, 3, env, true);
      log('warm resume: 10 and 1M records (plan checkpoints on and off)');
      warmLarge = await measureWarm([tiny, large], 5, env.home, spawnRecovery(env));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  reportQwen(smallFigures, largeFigures);
  reportWarm(warm, small.records);
  if (warmLarge) reportWarm(warmLarge, 1_000_000);
  reportAppend(append);
  addRow({
    section: 'warm resume',
    name: `100k rec: a turn with the checkpoint refreshed after it (${turns.on.length} processes x ${TURNS_PER_PROCESS} turns)`,
    value: `${ms(median(turns.on))} a turn (median per process)`,
    baseline: `checkpoints off ${ms(median(turns.off))}`,
    wall: pairedRatio(turns.on, turns.off),
    cpu: null,
    target: TARGET.turnWithCheckpoint,
  });
  raw['qwenFormat'] = { small: smallFigures, large: largeFigures, qwenCode: qwen };
  raw['warmResume'] = { warm, warmLarge, append, turns };
}

const LISTED_SESSIONS = 1000;
const LISTED_RECORDS = 10_000;

/**
 * `sessions list` over 1,000 sessions of 10k records each (one generated log, hard-linked
 * under 1,000 session names: a few MB on disk), in fresh processes: with plan checkpoints
 * off (every log read whole), cold (none yet: every log read whole, checkpoints written) and
 * warm (after one listing). Time to the first row and to the last.
 */
async function listings(): Promise<void> {
  const source = ensureSession(join(benchDir, 'list-10k'), { label: 'list-10k', profile: 'small', records: LISTED_RECORDS, seed: 1e4 });
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'mend-bench-list-home-')));
  const project = realpathSync(mkdtempSync(join(tmpdir(), 'mend-bench-list-project-')));
  try {
    const chats = dirname(sessionLogPath(home, project, '00000000-0000-4000-8000-000000000000'));
    mkdirSync(chats, { recursive: true });
    const first = join(chats, 'source.tmp');
    copyFileSync(source.path, first);
    for (let i = 0; i < LISTED_SESSIONS; i++) linkSync(first, sessionLogPath(home, project, `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`));
    rmSync(first);
    const list = async (mode: 'on' | 'off' | 'scan'): Promise<{ ms: number; firstMs: number; rows: number; planIds: number }> => {
      const t = await timeSpawn([listProcessJs, home, project, mode], { match: (l) => 'rows' in l });
      const line = t.line as { ms: number; firstMs: number; rows: number; planIds: number };
      if (line.rows !== LISTED_SESSIONS) throw new Error(`listing: ${line.rows} rows, not ${LISTED_SESSIONS}`);
      return line;
    };
    log(`listing ${LISTED_SESSIONS} sessions of ${LISTED_RECORDS} records: checkpoints off, cold, warm`);
    const off = await list('off');
    clearCheckpoints(home);
    const cold = await list('on');
    const warm: number[] = [];
    const warmFirst: number[] = [];
    const scan: number[] = [];
    for (let rep = 0; rep < Math.max(REPS, 5); rep++) {
      const w = await list('on');
      warm.push(w.ms);
      warmFirst.push(w.firstMs);
      scan.push((await list('scan')).ms);
    }
    const label = `${LISTED_SESSIONS.toLocaleString('en')} sessions x ${LISTED_RECORDS.toLocaleString('en')} rec`;
    addRow({
      section: 'listing',
      name: `${label}: list with kinds, warm (${warm.length} runs, in-process)`,
      value: `${ms(median(warm))} (first row ${ms(median(warmFirst))})`,
      baseline: `checkpoints off ${ms(off.ms)}; folder scan + a 4 KiB read each ${ms(median(scan))} (x${fmt(pairedRatio(warm, scan))}); target 1 s`,
      wall: median(warm) / 1000,
      cpu: null,
      target: TARGET.listWarmSeconds,
    });
    addRow({
      section: 'listing',
      name: `${label}: cold (no checkpoints yet, they are written), streaming`,
      value: `first row ${ms(cold.firstMs)}, all ${ms(cold.ms)}`,
      baseline: `checkpoints off: first row ${ms(off.firstMs)}, all ${ms(off.ms)}`,
      wall: cold.ms / off.ms,
      cpu: null,
    });
    raw['listing'] = { off, cold, warm, warmFirst, scan };
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  }
}

const TURNS_PER_PROCESS = 20;

/**
 * Turns on a copy of the session (bench/turn-process.ts), one process with plan checkpoints
 * on, one with them off, in alternating order; each process's median turn (its first two
 * turns left out: the history is loaded then).
 */
async function measureTurns(session: QwenSession, home: string): Promise<{ on: number[]; off: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'mend-bench-turns-'));
  const path = join(dir, `${session.sessionId}.jsonl`);
  const out = { on: [] as number[], off: [] as number[] };
  try {
    copyFileSync(session.path, path);
    clearCheckpoints(home);
    for (let rep = 0; rep < Math.max(REPS, 5); rep++) {
      const modes: Array<'on' | 'off'> = rep % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      for (const mode of modes) {
        const t = await timeSpawn([turnProcessJs, path, mode, String(TURNS_PER_PROCESS + 2), home], { match: (l) => 'ms' in l });
        const turnMs = (t.line?.['ms'] as number[]).slice(2);
        out[mode].push(median(turnMs));
      }
      process.stderr.write('.');
    }
    process.stderr.write('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

function spawnRecovery(env: { project: string }): SpawnRecovery {
  return (path, processEnv) =>
    timeSpawn([mendBin, '--resume', path, '-o', 'stream-json'], {
      cwd: env.project,
      env: processEnv,
      match: (l) => l['type'] === 'system' && l['subtype'] === 'recovery',
    });
}

/** Warm resume of the large session against the 10-record one, checkpoints on (target) and off (before). */
function reportWarm(f: WarmFigures, records: number): void {
  const [tinyOn, bigOn] = f.on as [number[], number[]];
  const [tinyOff, bigOff] = f.off as [number[], number[]];
  const label = `${records.toLocaleString('en')} rec`;
  addRow({
    section: 'warm resume',
    name: `${label}: spawn -> system/recovery, warm (${bigOn.length} runs)`,
    value: `${ms(median(bigOn))} (checkpoints off: ${ms(median(bigOff))}, x${fmt(pairedRatio(bigOff, tinyOff))} of 10 rec)`,
    baseline: `10 rec warm ${ms(median(tinyOn))} (off: ${ms(median(tinyOff))})`,
    wall: pairedRatio(bigOn, tinyOn),
    cpu: null,
    target: TARGET.warmResume,
  });
}

function reportAppend(f: AppendFigures): void {
  addRow({
    section: 'warm resume',
    name: `100k rec: resume after a turn was appended (${f.on.length} runs)`,
    value: `${ms(median(f.on))}`,
    baseline: `checkpoints off ${ms(median(f.off))}`,
    wall: pairedRatio(f.on, f.off),
    cpu: null,
  });
  addRow({
    section: 'warm resume',
    name: `100k rec: cold resume that writes the checkpoint (${f.coldOn.length} runs)`,
    value: `${ms(median(f.coldOn))}`,
    baseline: `checkpoints off ${ms(median(f.coldOff))}`,
    wall: pairedRatio(f.coldOn, f.coldOff),
    cpu: null,
  });
}

/** Linear, not quadratic: 10x more calls (fragments) costs about 10x the time, measured in this run. */
async function worstCases(): Promise<void> {
  const figures: ScalingFigure[] = [await planManyCalls(16_000, REPS), await readManyFragments(4_000, REPS)];
  for (const f of figures) {
    addRow({
      section: 'worst case',
      name: `${f.name}: ${f.small} -> ${f.large}`,
      value: `${ms(f.smallMs)} -> ${ms(f.largeMs)}`,
      baseline: '10x the size (median of paired runs)',
      wall: f.ratio,
      cpu: null,
      target: TARGET.worstCaseScaling,
    });
  }
  raw['worstCases'] = figures;
}

function printTable(): void {
  const header = ['section', 'measurement', 'mend', 'baseline (same run)', 'ratio', 'cpu ratio', 'target', ''];
  const x = (v: number | null): string => (v === null ? '' : `${fmt(v)}x`);
  const body = rows.map((r) => [r.section, r.name, r.value, r.baseline, x(r.wall), x(r.cpu), r.target, r.ok === null ? '' : r.ok ? 'ok' : 'MISS']);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const b of body) console.log(line(b));
}

async function main(): Promise<void> {
  const started = performance.now();
  const machine = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    loadavgStart: loadavg().map((x) => Number(x.toFixed(2))),
    loadavgEnd: [] as number[],
    reps: REPS,
    date: new Date().toISOString(),
  };
  log(`mend bench: ${machine.nproc} cpus (${machine.cpu}), node ${machine.node}, load ${machine.loadavgStart.join(' ')}, ${REPS} reps`);

  if (LISTING_ONLY) {
    await listings();
    printTable();
    return;
  }
  if (!QWEN_ONLY) {
    log('worst cases (linear scaling)');
    await worstCases();
  }
  const specs = WORST_ONLY || QWEN_ONLY ? [] : QUICK ? SESSIONS.filter((s) => s.label === 'large-10mb' || s.label === 'small-100k') : SESSIONS;
  const sessions = new Map<string, GeneratedSession>();
  for (const spec of specs) {
    const t = performance.now();
    const s = ensureSession(benchDir, spec);
    sessions.set(spec.label, s);
    log(
      `${s.reused ? 'reusing' : 'generated'} ${relative(root, s.path)}: ${fmt(s.bytes / MB, 1)} MB, ${s.records} records${s.reused ? '' : ` (${ms(performance.now() - t)})`}`,
    );
  }

  mkdirSync(benchDir, { recursive: true });
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'mend-bench-home-')));
  const project = realpathSync(mkdtempSync(join(tmpdir(), 'mend-bench-project-')));
  try {
    if (!WORST_ONLY) {
      log('start-up');
      await startup({ home, project });
      await qwenFormat({ home, project });
      await listings();
    }

    const stats = new Map<string, FileStats>();
    for (const [label, s] of sessions) {
      log(`load+plan ${label}`);
      stats.set(label, await measureFile(s, s.spec.profile === 'large', { home, project }));
    }
    for (const s of stats.values()) reportFile(s);
    const pair = (a: string, b: string, unit: 'MB' | 'rec'): void => {
      const x = stats.get(a);
      const y = stats.get(b);
      if (x && y) growthRow(x, y, unit);
    };
    pair('large-10mb', 'large-100mb', 'MB');
    pair('small-100k', 'small-1m', 'rec');
    raw['files'] = Object.fromEntries(
      [...stats].map(([k, v]) => [k, { bytes: v.session.bytes, records: v.session.records, floor: v.floor, read: v.read, loadplan: v.loadplan, cli: v.cli }]),
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  }

  machine.loadavgEnd = loadavg().map((x) => Number(x.toFixed(2)));
  const elapsed = (performance.now() - started) / 1000;
  console.log(
    `\nmend bench — ${machine.nproc} cpus (${machine.cpu}), ${machine.memGb} GB, node ${machine.node}, ` +
      `load average ${machine.loadavgStart.join(' ')} -> ${machine.loadavgEnd.join(' ')}, median of ${REPS} runs (files under 64 MB: ${Math.max(REPS, 9)}, start-up: ${STARTUP_REPS}), ${fmt(elapsed, 0)} s\n`,
  );
  printTable();
  const misses = rows.filter((r) => r.ok === false);
  console.log(misses.length === 0 ? '\nall targets met' : `\n${misses.length} target(s) missed: ${misses.map((m) => m.name).join('; ')}`);
  mkdirSync(dirname(JSON_OUT), { recursive: true });
  writeFileSync(JSON_OUT, `${JSON.stringify({ machine, targets: TARGET, rows, raw, elapsedS: elapsed }, null, 2)}\n`);
  if (CHECK && misses.length > 0) process.exitCode = 1;
}

await main();
