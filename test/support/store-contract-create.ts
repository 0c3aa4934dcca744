/**
 * The store contract for `WriterLease.createWith` (what a fork writes): a session made
 * from a complete list of records appears whole or not at all, to every reader, and
 * appends follow it. Part of storeContract (store-contract.ts).
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import type { ChatRecord } from '../../src/session/records.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { scopeFor, WRITER } from './store-fixtures.js';
import { record } from './store-records.js';

/** More than one statement's worth for a database store (it writes 1000 rows per statement). */
const MANY = 2500;

function chain(id: string, count: number, from = 1): ChatRecord[] {
  const out: ChatRecord[] = [];
  for (let n = from; n < from + count; n++) {
    const parent = n === 1 ? null : `${id.slice(0, 8)}-u${n - 1}`;
    out.push(record(id, n, parent, new Date(Date.UTC(2026, 2, 1, 0, 0, 0, n)).toISOString(), `fork record ${n}`));
  }
  return out;
}

export function createWithContract(shared: () => Promise<SessionStore>): void {
  it(`createWith: a session of ${MANY} records appears whole to every reader, never in part; appends follow it`, { timeout: 60_000 }, async () => {
    const store = await shared();
    const scope = scopeFor('create');
    const id = randomUUID();
    const ref = await store.newSession(scope, id);
    const lease = await store.acquire(ref, WRITER);
    const records = chain(id, MANY);

    // Readers polling while the session is created see nothing or all of it.
    const seen: number[] = [];
    let done = false;
    const creating = lease.createWith(records).finally(() => (done = true));
    while (!done) {
      // Absent counts as 0 records.
      const rows = await store.list(scope);
      seen.push(rows.length === 0 ? 0 : rows.length === 1 ? rows[0]!.records : -1);
      seen.push((await store.exists(ref)) ? (await store.read(ref)).records.length : 0);
      seen.push((await store.latest(scope)) === null ? 0 : (await store.read(ref)).records.length);
    }
    await creating;
    expect(seen.filter((n) => n !== 0 && n !== MANY)).toEqual([]);

    const read = await store.read(ref);
    expect(read.records.map((r) => r.record)).toEqual(records);
    expect(read.diagnostics).toEqual([]);
    expect((await store.list(scope)).map((l) => [l.ref.sessionId, l.records, l.firstPrompt])).toEqual([[id, MANY, 'fork record 1']]);
    expect((await store.latest(scope))?.sessionId).toBe(id);
    expect(await store.activeWriter(ref)).toMatchObject({ host: WRITER.host, pid: WRITER.pid });

    // Once: a second create of the same session is refused and changes nothing.
    await expect(lease.createWith(chain(id, 1, MANY + 1))).rejects.toSatisfy((e) => isMendError(e, 'session_exists'));
    const next = chain(id, 1, MANY + 1)[0]!;
    await lease.append(next, { durable: true });
    await lease.release();
    expect((await store.read(ref)).records.map((r) => r.record)).toEqual([...records, next]);

    // Nor through a later lease of the existing session.
    const again = await store.acquire(ref, WRITER);
    await expect(again.createWith(chain(id, 3))).rejects.toSatisfy((e) => isMendError(e, 'session_exists'));
    await again.release();
    expect((await store.read(ref)).records).toHaveLength(MANY + 1);
    await expect(store.newSession(scope, id)).rejects.toSatisfy((e) => isMendError(e, 'session_exists'));
  });

  it('createWith refuses a list holding another session’s record and writes none of it', async () => {
    const store = await shared();
    const scope = scopeFor('create-refused');
    const id = randomUUID();
    const ref = await store.newSession(scope, id);
    const lease = await store.acquire(ref, WRITER);
    const records = chain(id, 5);
    records[3] = { ...records[3]!, sessionId: randomUUID() };
    await expect(lease.createWith(records)).rejects.toSatisfy((e) => isMendError(e, 'session_write_failed'));
    await expect(lease.createWith([])).rejects.toThrow(/at least one record/);
    expect(await store.exists(ref)).toBe(false);
    expect(await store.list(scope)).toEqual([]);
    expect(await store.latest(scope)).toBeNull();
    // The lease still holds the session: a correct list creates it.
    await lease.createWith(chain(id, 5));
    await lease.release();
    expect((await store.read(ref)).records).toHaveLength(5);
  });
}
