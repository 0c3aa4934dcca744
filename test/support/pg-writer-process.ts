/**
 * One mend-like process for the PostgreSQL multi-process tests, run built
 * (`node dist/test/support/pg-writer-process.js`). Prints one JSON line per step on stdout.
 *
 *   migrate URL                 migrate, print {"migrated": [...]} and exit
 *   race URL SESSION HOST ROOT  print {"ready"}; on the stdin line "go" take the
 *                               writer lease; the winner appends 10 records,
 *                               prints {"outcome":"won"} and holds the lease until
 *                               stdin ends; a loser prints {"outcome":"locked", details}
 *   hold URL FILE HOST ROOT     append every record of the JSONL FILE (durable, as
 *                               before a tool starts), print {"written": n, "epoch"}
 *                               and hold the lease until killed ("mid-tool")
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ChatRecord } from '../../src/session/records.js';
import { errorCodeOf, isMendError } from '../../src/errors.js';
import { PostgresSessionStore } from '../../src/store/postgres/pg-store.js';
import { record } from './store-records.js';

const [mode, url, sessionId, host, root] = process.argv.slice(2);
const say = (value: unknown): void => void process.stdout.write(JSON.stringify(value) + '\n');
const store = new PostgresSessionStore({ spec: url!, env: {} });

if (mode === 'migrate') {
  const result = await store.migrate();
  say({ migrated: result.applied, version: result.version });
  await store.close();
} else if (mode === 'race') {
  const ref = await store.resolve({ projectRoot: root!, cwd: root! }, sessionId!);
  // The look-up used a pooled connection; close the pool so each process holds
  // exactly one connection while racing: the writer's own.
  await store.close();
  const stdin = createInterface({ input: process.stdin });
  const lines = stdin[Symbol.asyncIterator]();
  say({ ready: true });
  await lines.next();
  try {
    const lease = await store.acquire(ref, { host: host!, pid: process.pid });
    let parent: string | null = null;
    for (let n = 1; n <= 10; n++) {
      const r = record(sessionId!, n, parent, new Date(Date.UTC(2026, 2, 1, 0, 0, n)).toISOString());
      await lease.append(r, { durable: n === 10 });
      parent = r.uuid;
    }
    say({ outcome: 'won', epoch: lease.holder.epoch });
    while (!(await lines.next()).done);
    await lease.release();
  } catch (error) {
    say({
      outcome: isMendError(error, 'session_locked') ? 'locked' : 'failed',
      code: errorCodeOf(error),
      details: isMendError(error) ? error.details : String(error),
    });
  }
  stdin.close();
  await store.close();
} else if (mode === 'hold') {
  // Here `sessionId` is the JSONL file to copy.
  const lines = readFileSync(sessionId!, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  const records = lines.map((l) => JSON.parse(l) as ChatRecord);
  const ref = await store.newSession({ projectRoot: root!, cwd: root! }, records[0]!.sessionId);
  const lease = await store.acquire(ref, { host: host!, pid: process.pid });
  for (const r of records) await lease.append(r, { durable: true });
  say({ written: records.length, epoch: lease.holder.epoch });
  // Mid-tool: hold the lease until SIGKILL.
  setInterval(() => undefined, 60_000);
} else {
  say({ error: `unknown mode ${mode}` });
  process.exitCode = 2;
}
