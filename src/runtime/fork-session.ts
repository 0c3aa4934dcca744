/**
 * A fork: the source session's records copied into a new session under the new
 * id, then a `parent_session` record as the new leaf. Store-neutral: it reads
 * through one SessionStore and writes through the new session's lease.
 */
import { RecordBuilder, type RecordContext } from '../engine/record-builder.js';
import type { ChatRecord } from '../session/records.js';
import type { SessionRef, SessionStore, WriterLease } from '../store/session-store.js';

export async function forkInto(store: SessionStore, source: SessionRef, lease: WriterLease, ctx: RecordContext): Promise<void> {
  const read = await store.read(source);
  const sourceSessionId = read.sessionId ?? source.sessionId;
  for (const { record } of read.records) await lease.append({ ...record, sessionId: ctx.sessionId } as ChatRecord, { durable: false });
  const leaf = read.records.at(-1)?.record.uuid ?? null;
  const builder = new RecordBuilder(ctx, leaf);
  await lease.append(builder.system('parent_session', { sourceSessionId, sourceLeafUuid: leaf, sourcePath: source.location }), { durable: true });
}
