/**
 * The outline pass of a large log on two threads. Parsing every line is most
 * of a resume's time and the lines are independent: the main thread reads chunks from
 * the front of the file while a worker (outline-worker.ts) reads chunks from the back
 * (outline-chunks.ts); the worker's passes are appended after the main thread's in file
 * order. Every line is still parsed and checked exactly once, by the same code, and the
 * result is the one a single pass gives (test/session/outline/outline-parallel.e2e.test.ts).
 *
 * A worker that cannot start or fails costs nothing but its time: the main thread then
 * reads the rest of the file itself, and a real read error is met again there.
 */
import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as WorkerThreads from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';
import { DEFAULT_BLOCK_SIZE, lineStartFrom, readLineBlocksFrom } from '../line-blocks.js';
import { ChunkClaims } from './outline-chunks.js';
import { columnsTransfer } from './outline-columns.js';
import { OutlinePass, type PassData } from './outline-pass.js';

/** How a large log's outline pass is shared with a worker thread. */
export interface OutlineParallel {
  /** Bytes per chunk (default 4 MiB). */
  chunkBytes?: number;
  /** Files smaller than this are read on one thread (default 16 MiB: a worker costs ~20-40 ms to start). */
  minBytes?: number;
  /**
   * Files larger than this are read on one thread too (default 256 MiB). The worker's own
   * heap and the copy of its share of the columns cost some 40-80 MB; past a few hundred
   * MB a resume takes seconds either way and its memory is what must stay bounded
   * (measured at 1M records, 854 MB: 3.1 s and 256 MB peak with the worker, 4.6 s and
   * about 210 MB without; the memory target asks at most a quarter of the file).
   */
  maxBytes?: number;
  /** Starts the worker (default: outline-worker.js next to this module, or the bundle's). */
  spawn?: (job: WorkerJob) => Worker;
  /**
   * Tests: the main thread takes its first chunk only once the worker is about to take
   * its own (or has failed), so that small files are shared too, not read by the main
   * thread before a worker has started.
   */
  startTogether?: boolean;
  /** Told when the worker failed (the main thread then read its chunks): a broken install shows. */
  onWorkerError?: (error: unknown) => void;
}

/** What the worker is given. */
export interface WorkerJob {
  /**
   * The main thread's descriptor of the log (threads share the process's descriptors):
   * both read the same file even if the path is renamed over meanwhile.
   */
  fd: number;
  /** The file's size when the read began (chunks cover it; the last runs on to the end). */
  size: number;
  chunkBytes: number;
  chunks: number;
  claims: SharedArrayBuffer;
  blockSize: number;
  /** Whether ordinary record lines are read by the line scanner (OutlineOptions.scan). */
  scan: boolean;
}

/** What the worker hands back: a pass per chunk it read. */
export interface WorkerResult {
  passes: (PassData & { chunk: number })[];
}

const DEFAULT_CHUNK_BYTES = 4 << 20;
const DEFAULT_MIN_BYTES = 16 << 20;
const DEFAULT_MAX_BYTES = 256 << 20;

/** Whether a file of `size` bytes is read on two threads. */
export function readsInParallel(size: number, parallel: OutlineParallel | false | undefined): parallel is OutlineParallel {
  if (parallel === false || parallel === undefined || size === 0) return false;
  return size >= (parallel.minBytes ?? DEFAULT_MIN_BYTES) && size <= (parallel.maxBytes ?? DEFAULT_MAX_BYTES);
}

// worker_threads is loaded when a worker starts, not with this module: it cost 4-7 ms of
// every start-up, where most resumes read a small log on one thread.
const defaultSpawn = (job: WorkerJob): Worker => {
  const { Worker } = createRequire(import.meta.url)('node:worker_threads') as typeof WorkerThreads;
  return new Worker(new URL('./outline-worker.js', import.meta.url), { workerData: job });
};

/** The outline pass over the file at `path` (`size` bytes when stat'ed), its front here and its back on a worker. */
export async function parallelPass(path: string, size: number, parallel: OutlineParallel, blockSize = DEFAULT_BLOCK_SIZE, scan = true): Promise<OutlinePass> {
  const chunkBytes = Math.max(1, parallel.chunkBytes ?? DEFAULT_CHUNK_BYTES);
  const chunks = Math.ceil(size / chunkBytes);
  const claims = new ChunkClaims(chunks);
  const fd = openSync(path, 'r');
  const job: WorkerJob = { fd, size, chunkBytes, chunks, claims: claims.buffer, blockSize, scan };
  const worker = startWorker(parallel.spawn ?? defaultSpawn, job);
  try {
    if (parallel.startTogether === true) await claims.whenReady(() => worker.settled);
    const pass = new OutlinePass(size, size, true, 0, scan);
    // Chunks come from the front one after another, so the range only moves on.
    const range = {
      end: limitAfter(claims.front(), chunks, chunkBytes),
      extend(): boolean {
        const chunk = claims.front();
        if (chunk < 0) return false;
        range.end = limitAfter(chunk, chunks, chunkBytes);
        return true;
      },
    };
    let end = await readLineBlocksFrom(fd, 0, (bytes, offset) => pass.block(bytes, offset, range), blockSize);
    const failed = (error: unknown): null => {
      parallel.onWorkerError?.(error);
      return null;
    };
    if (end.stopped !== true && pass.finish(end, 0, range)) {
      // Every line started in the chunks read here: the worker has none. One that started
      // late is not waited for; one that already failed is reported.
      if (worker.settled) await worker.result.catch(failed);
      return pass;
    }
    const front = Math.round(range.end / chunkBytes);
    let result = await worker.result.catch(failed);
    if (result !== null && !coversFrom(result, front, chunks)) result = failed(new Error('the outline worker read other chunks than it was left'));
    if (result !== null) {
      for (const part of result.passes.sort((a, b) => a.chunk - b.chunk)) pass.append(part);
      pass.workerChunks = result.passes.length;
      return pass;
    }
    // The worker failed: the rest of the file is read here.
    const from = pass.stoppedAt;
    end = await readLineBlocksFrom(fd, from, (bytes, offset) => pass.block(bytes, offset), blockSize);
    pass.finish(end, from);
    return pass;
  } finally {
    // Closed once the worker reads no more: a descriptor closed under it could be reused
    // for another file before it notices. A worker still running (its chunks not needed,
    // or this read failed) is stopped first.
    if (worker.settled) closeSync(fd);
    else {
      worker.dismiss();
      void worker.exited.then(() => closeSync(fd));
    }
  }
}

/** Where the lines of `chunk` end (the last chunk runs on to the end of the file). */
function limitAfter(chunk: number, chunks: number, chunkBytes: number): number {
  return chunk === chunks - 1 ? Number.POSITIVE_INFINITY : (chunk + 1) * chunkBytes;
}

/** Whether the worker read exactly the chunks from `front` on. */
function coversFrom(result: WorkerResult, front: number, chunks: number): boolean {
  const seen = new Set(result.passes.map((p) => p.chunk));
  if (seen.size !== result.passes.length || seen.size !== chunks - front) return false;
  for (let c = front; c < chunks; c++) if (!seen.has(c)) return false;
  return true;
}

interface StartedWorker {
  result: Promise<WorkerResult>;
  /** Resolves when the worker thread has stopped (or never started). */
  exited: Promise<void>;
  /** Whether `result` is settled. */
  readonly settled: boolean;
  /** Stops a worker whose chunks are not needed (its end is then not an error). */
  dismiss(): void;
}

function startWorker(spawn: (job: WorkerJob) => Worker, job: WorkerJob): StartedWorker {
  let worker: Worker | null = null;
  let settled = false;
  let exit = (): void => {};
  const exited = new Promise<void>((resolve) => (exit = resolve));
  const result = new Promise<WorkerResult>((resolve, reject) => {
    try {
      worker = spawn(job);
    } catch (error) {
      exit();
      throw error;
    }
    worker.once('message', (message: WorkerResult) => resolve(message));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      exit();
      reject(new Error(`outline worker exited (${code}) without a result`));
    });
  });
  result.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    result,
    exited,
    get settled() {
      return settled;
    },
    dismiss: () => {
      void worker?.terminate();
    },
  };
}

/** The worker's side: chunks from the back until none is left, each as its own pass. */
export async function readBackChunks(job: WorkerJob): Promise<{ result: WorkerResult; transfer: ArrayBuffer[] }> {
  const claims = new ChunkClaims(job.claims);
  const passes: WorkerResult['passes'] = [];
  const transfer: ArrayBuffer[] = [];
  const fd = job.fd;
  claims.ready();
  for (let chunk = claims.back(); chunk >= 0; chunk = claims.back()) {
    const from = chunk * job.chunkBytes;
    const limit = limitAfter(chunk, job.chunks, job.chunkBytes);
    const begin = lineStartFrom(fd, from);
    const pass = new OutlinePass(job.size, job.chunkBytes, chunk === 0, begin, job.scan);
    if (begin < limit) {
      const range = { end: limit, extend: () => false };
      const end = await readLineBlocksFrom(fd, begin, (bytes, offset) => pass.block(bytes, offset, range), job.blockSize);
      // A pass that read to the end of the file knows its end (one that found no line there does not).
      if (end.stopped !== true && end.bytes > 0) pass.finish(end, begin, range);
    }
    const data = pass.data();
    passes.push({ ...data, chunk });
    transfer.push(...columnsTransfer(data.columns));
  }
  return { result: { passes }, transfer };
}
