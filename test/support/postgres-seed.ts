/**
 * Seeds a PostgreSQL store the only way the store accepts records: one append
 * per line under a writer lease. A line that is not a valid record of the
 * session (torn, garbage, foreign id, blank in the middle) cannot be held and
 * makes the seed throw.
 */
import type { ChatRecord } from '../../src/session/records.js';
import type { ProjectScope, SessionRef, SessionStore } from '../../src/store/session-store.js';

export async function seedThroughAppends(store: SessionStore, scope: ProjectScope, sessionId: string, lines: string[]): Promise<SessionRef> {
  const body = lines.at(-1) === '' ? lines.slice(0, -1) : lines;
  const ref = await store.newSession(scope, sessionId);
  if (body.length === 0) return ref;
  const lease = await store.acquire(ref, { host: 'seed-host', pid: process.pid });
  try {
    for (const line of body) await lease.append(JSON.parse(line) as ChatRecord, { durable: false });
  } finally {
    await lease.release();
  }
  return ref;
}
