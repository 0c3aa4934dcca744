import { parentPort, workerData } from 'node:worker_threads';
import { LineFramer } from '../src/stream/line-framer.js';
const x: number = workerData.x;
parentPort!.postMessage({ ok: x, framed: new LineFramer().push('{"a":1}\n') });
