/**
 * One listing of a project's sessions in a fresh process, modules loaded first:
 *
 *   node dist/bench/list-process.js HOME PROJECT on|off
 *
 * Lists the sessions the way `mend sessions list` does (src/runtime/list-sessions.ts), with
 * plan checkpoints on (in HOME's cache) or off. Prints one JSON line: the time to the first
 * row and to the last, and how many rows there were, by kind.
 */
import { open, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sessionLogPath } from '../src/session/session-paths.js';
import { settledCheckpointWrites } from '../src/runtime/checkpoint/plan-checkpoints.js';
import { listSessions } from '../src/runtime/list-sessions.js';
import { JsonlSessionStore } from '../src/store/jsonl/jsonl-store.js';

const [home, project, mode] = process.argv.slice(2) as [string, string, 'on' | 'off' | 'scan'];
if (mode === 'scan') {
  // The floor: the folder scan and one 4 KiB read from the end of each log, 16 at a time.
  const chats = dirname(sessionLogPath(home, project, '00000000-0000-4000-8000-000000000000'));
  const t = performance.now();
  const names = await readdir(chats);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const handle = await open(join(chats, names[next++]!), 'r');
      const size = (await handle.stat()).size;
      await handle.read(Buffer.alloc(4096), 0, 4096, Math.max(0, size - 4096));
      await handle.close();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  console.log(JSON.stringify({ mode, ms: performance.now() - t, rows: names.length }));
  process.exit(0);
}
const store = new JsonlSessionStore({ home, ...(mode === 'on' ? { checkpoints: {} } : {}) });
const t0 = performance.now();
let firstMs: number | null = null;
const rows = await listSessions(store, { projectRoot: project, cwd: project }, undefined, {
  onRow: () => {
    firstMs ??= performance.now() - t0;
  },
});
const ms = performance.now() - t0;
await settledCheckpointWrites();
const kinds: Record<string, number> = {};
for (const row of rows) {
  const key = row.error ? `error ${row.error.code}` : `${row.kind}/${row.cause}`;
  kinds[key] = (kinds[key] ?? 0) + 1;
}
console.log(JSON.stringify({ mode, ms, firstMs, rows: rows.length, kinds, planIds: new Set(rows.map((r) => r.planId)).size }));
