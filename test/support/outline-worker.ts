/**
 * The outline pass's worker thread for tests: the module src/session/outline/outline-worker.ts
 * as built, and workers that fail on purpose.
 */
import { Worker } from 'node:worker_threads';
import type { WorkerJob } from '../../src/session/outline/outline-parallel.js';
import { outsideTheProcess } from './outside-the-process.js';

const built = new URL('../../dist/src/session/outline/outline-worker.js', import.meta.url);

/**
 * The same worker as compiled by `npm run build` (which `npm test` runs first): starts in
 * milliseconds, where compiling the sources in each worker took seconds, and many seconds
 * on a busy machine.
 */
export function builtOutlineWorker(job: WorkerJob): Worker {
  outsideTheProcess('the built outline worker');
  return new Worker(built, { workerData: job });
}

/** A worker that fails before it reads anything (the main thread must then read every chunk). */
export function failingWorker(job: WorkerJob): Worker {
  return new Worker(`throw new Error('no worker today');`, { eval: true, workerData: job });
}

/** A worker that takes chunks and dies before it hands them back. */
export function dyingWorker(job: WorkerJob): Worker {
  const claims = `const cells = new Int32Array(require('node:worker_threads').workerData.claims);`;
  // Takes the back chunks under the lock like ChunkClaims.back, then exits without a message.
  const take = `while (Atomics.compareExchange(cells, 0, 0, 1) !== 0) {} const f = Atomics.load(cells, 1), b = Atomics.load(cells, 2); if (b - f > 1) Atomics.store(cells, 2, b - 1); Atomics.store(cells, 0, 0); process.exit(3);`;
  return new Worker(`${claims} ${take}`, { eval: true, workerData: job });
}
