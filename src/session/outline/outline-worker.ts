/**
 * The worker thread of a parallel outline pass (outline-parallel.ts): reads chunks
 * from the back of the log until it meets the main thread, then hands its passes back,
 * their column buffers transferred, not copied. A failure surfaces as the worker's
 * error; the main thread then reads those chunks itself.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readBackChunks, type WorkerJob } from './outline-parallel.js';

// No top-level await: the bundled CLI runs this module as CommonJS.
void readBackChunks(workerData as WorkerJob).then(({ result, transfer }) => parentPort!.postMessage(result, transfer));
