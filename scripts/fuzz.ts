import { Worker } from 'node:worker_threads';
const workerUrl = new URL('./fuzz-worker.ts', import.meta.url).href;
const api = import.meta.resolve('tsx/esm/api');
console.log(api);
const code = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(workerUrl)}); });`;
const w = new Worker(code, { eval: true, workerData: { x: 1 } });
w.on('message', (m) => { console.log('msg', JSON.stringify(m)); w.terminate(); });
w.on('error', (e) => console.log('err', e));
