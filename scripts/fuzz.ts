/**
 * `npm run fuzz [-- --cases N --seed S]`: fuzzes the log reader, the loader and
 * the recovery planner, and the stream-json input framer with the control schemas.
 * Not part of `npm test` (test/recovery/fuzz-smoke.test.ts runs a small slice).
 *
 * Batches run in worker_threads Workers; a batch that does not finish in time is
 * a hang: its worker is terminated and the batch seed and the cases it was running
 * are reported. Prints cases run, failures (failing cases), hangs and seconds.
 * Exit code 0 only with zero failures and zero hangs.
 *
 * Options:
 *   --cases N       number of cases (default 100000)
 *   --seed S        run seed (default: random; printed so a run can be repeated)
 *   --workers W     parallel workers (default: min(4, CPUs))
 *   --batch B       cases per batch (default 500)
 *   --timeout MS    time limit per batch (default 120000)
 *   --case C        replay one case in-process and write its input to a temp file
 *   --index I       ...with this global case index (it picks the scheduled heavy families)
 */
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import {
  caseSeedOf,
  createContext,
  disposeContext,
  familyOf,
  logBytes,
  mix,
  Rng,
  runCase,
  type BatchRequest,
  type BatchResult,
  type FuzzFailure,
  type WorkerMessage,
} from '../test/support/fuzz-worker.js';

interface Options {
  cases: number;
  seed: number;
  workers: number;
  batch: number;
  timeoutMs: number;
  replay: number | null;
  index: number;
}

function parseArgs(argv: readonly string[]): Options {
  const opts: Options = {
    cases: 100_000,
    seed: Math.floor(Math.random() * 0x100000000) >>> 0,
    workers: Math.max(1, Math.min(4, cpus().length)),
    batch: 500,
    timeoutMs: 120_000,
    replay: null,
    index: 1,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): number => {
      const raw = argv[++i];
      const n = Number(raw);
      if (raw === undefined || !Number.isFinite(n) || n < 0) throw new Error(`${flag} needs a non-negative number`);
      return Math.floor(n);
    };
    if (flag === '--cases') opts.cases = value();
    else if (flag === '--seed') opts.seed = value() >>> 0;
    else if (flag === '--workers') opts.workers = Math.max(1, value());
    else if (flag === '--batch') opts.batch = Math.max(1, value());
    else if (flag === '--timeout') opts.timeoutMs = Math.max(1, value());
    else if (flag === '--case') opts.replay = value() >>> 0;
    else if (flag === '--index') opts.index = value();
    else throw new Error(`unknown option ${flag} (see the header of scripts/fuzz.ts)`);
  }
  return opts;
}

/** Each worker's temp directory: a terminated worker cannot remove its own. */
const scratchDirs = new Map<Worker, string>();

async function stopWorker(worker: Worker): Promise<void> {
  await worker.terminate();
  const dir = scratchDirs.get(worker);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  scratchDirs.delete(worker);
}

/**
 * Starts a worker on fuzz-worker (the .ts source under tsx, the .js next to us once
 * built) and waits until it has loaded, so start-up time never counts as a hang.
 */
function startWorker(): Promise<Worker> {
  const self = import.meta.url;
  let worker: Worker;
  if (self.endsWith('.ts')) {
    const target = new URL('../test/support/fuzz-worker.ts', self).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); });`;
    worker = new Worker(code, { eval: true, workerData: { mendFuzz: true } });
  } else {
    worker = new Worker(new URL('../test/support/fuzz-worker.js', self), { workerData: { mendFuzz: true } });
  }
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (message: WorkerMessage) => {
      worker.off('error', reject);
      if (message.type === 'ready') {
        scratchDirs.set(worker, message.dir);
        resolve(worker);
      } else reject(new Error(`fuzz worker said ${message.type} before ready`));
    });
  });
}

interface Hang {
  batchSeed: number;
  firstIndex: number;
  /** The cases that were running (global indexes), when known. */
  from: number | null;
  to: number | null;
}

/** Runs one batch in `worker`; resolves with its result, or with a hang after terminating the worker. */
function runInWorker(worker: Worker, request: BatchRequest, timeoutMs: number): Promise<{ result: BatchResult } | { hang: Hang }> {
  return new Promise((resolve) => {
    let window: { from: number; to: number } | null = null;
    const finish = (value: { result: BatchResult } | { hang: Hang }): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      resolve(value);
    };
    const onMessage = (message: WorkerMessage): void => {
      if (message.type === 'window') window = { from: message.from, to: message.to };
      else if (message.type === 'done') finish({ result: message.result });
    };
    const onError = (error: Error): void => {
      // Something escaped the worker's own try/catch: count the running cases as one failure.
      const index = window?.from ?? request.firstIndex;
      finish({
        result: {
          batchSeed: request.batchSeed,
          cases: index - request.firstIndex + 1,
          failures: [{ index, caseSeed: caseSeedOf(request.batchSeed, index), family: 'corpus', problems: [`worker error ${error.message}`] }],
          ms: 0,
        },
      });
    };
    const timer = setTimeout(() => {
      void stopWorker(worker);
      finish({ hang: { batchSeed: request.batchSeed, firstIndex: request.firstIndex, from: window?.from ?? null, to: window?.to ?? null } });
    }, timeoutMs);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.postMessage(request);
  });
}

async function replay(opts: Options): Promise<number> {
  const ctx = createContext();
  try {
    const r = new Rng(opts.replay!);
    const family = familyOf(opts.index, r);
    if (family !== 'stream') {
      const file = join(tmpdir(), `mend-fuzz-case-${opts.replay}.jsonl`);
      writeFileSync(file, logBytes(ctx, family, r));
      console.log(`family ${family}; input written to ${file}`);
    }
    const { problems } = await runCase(ctx, opts.replay!, opts.index);
    console.log(problems.length === 0 ? 'no problems' : problems.join('\n'));
    return problems.length === 0 ? 0 : 1;
  } finally {
    disposeContext(ctx);
  }
}

async function main(): Promise<number> {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.replay !== null) return replay(opts);

  const started = performance.now();
  console.log(`mend fuzz: ${opts.cases} cases, seed ${opts.seed}, ${opts.workers} workers, batches of ${opts.batch}`);
  const batches: BatchRequest[] = [];
  for (let first = 0, k = 0; first < opts.cases; first += opts.batch, k++) {
    batches.push({ batchSeed: mix(opts.seed, k), count: Math.min(opts.batch, opts.cases - first), firstIndex: first });
  }

  let casesRun = 0;
  const failures: Array<FuzzFailure & { batchSeed: number }> = [];
  const hangs: Hang[] = [];
  let next = 0;
  let lastReport = performance.now();

  const lane = async (): Promise<void> => {
    let worker = await startWorker();
    while (next < batches.length) {
      const request = batches[next++]!;
      const outcome = await runInWorker(worker, request, opts.timeoutMs);
      if ('hang' in outcome) {
        hangs.push(outcome.hang);
        casesRun += outcome.hang.from === null ? 0 : outcome.hang.from - request.firstIndex;
        worker = await startWorker();
        continue;
      }
      casesRun += outcome.result.cases;
      for (const f of outcome.result.failures) failures.push({ ...f, batchSeed: request.batchSeed });
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        console.log(`  ... ${casesRun} cases, ${failures.length} failures, ${hangs.length} hangs, ${((lastReport - started) / 1000).toFixed(0)} s`);
      }
    }
    await stopWorker(worker);
  };
  await Promise.all(Array.from({ length: Math.min(opts.workers, batches.length) }, lane));

  const seconds = (performance.now() - started) / 1000;
  // Group failures by message (minus the varying details) so one bug prints once.
  const groups = new Map<string, Array<FuzzFailure & { batchSeed: number }>>();
  for (const f of failures) {
    const key = f.problems[0]!.replace(/\d+/g, 'N').slice(0, 240);
    const list = groups.get(key) ?? [];
    list.push(f);
    groups.set(key, list);
  }
  for (const [key, list] of groups) {
    const f = list[0]!;
    const families = [...new Set(list.map((x) => x.family))].join(',');
    console.log(
      `FAIL x${list.length} [${families}] ${key}\n  e.g. ${f.problems.join(' | ').slice(0, 400)}\n  replay: npm run fuzz -- --case ${f.caseSeed} --index ${f.index}`,
    );
  }
  for (const h of hangs) {
    const running = h.from === null || h.to === null ? [] : Array.from({ length: h.to - h.from + 1 }, (_, k) => h.from! + k);
    console.log(
      `HANG batch seed ${h.batchSeed} (cases from index ${h.firstIndex}); running: ` +
        (running.map((i) => `--case ${caseSeedOf(h.batchSeed, i)} --index ${i}`).join(', ') || 'unknown'),
    );
  }
  console.log(`cases run: ${casesRun}, failures: ${failures.length}, hangs: ${hangs.length}, seconds: ${seconds.toFixed(1)}`);
  return failures.length === 0 && hangs.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 2;
  },
);
