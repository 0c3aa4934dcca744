/**
 * The outline pass's worker thread for tests that run the TypeScript sources: the
 * same module (src/session/outline/outline-worker.ts) run in a worker through tsx, as the
 * built CLI runs its compiled bundle.
 */
import { Worker } from 'node:worker_threads';
import type { WorkerJob } from '../../src/session/outline/outline-parallel.js';

const entry = new URL('../../src/session/outline/outline-worker.ts', import.meta.url).href;

export function tsOutlineWorker(job: WorkerJob): Worker {
  const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData: job });
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
