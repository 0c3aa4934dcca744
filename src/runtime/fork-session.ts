/**
 * A fork: the source session's records copied into a new session under the new
 * id, then a `parent_session` record as the new leaf. Store-neutral: it reads
 * through one SessionStore and writes through the new session's lease, in one
 * `createWith`: the fork appears whole or not at all (a crash halfway through must
 * not leave a broken fork for a later --continue to pick).
 *
 * A fork of a session another process is still writing never takes that run's
 * unfinished turn along: the records from its prompt on stay behind (the run is still
 * answering them), so the fork neither sends the prompt again nor closes calls that are
 * still running. The `parent_session` record says what was left out.
 */
import { RecordBuilder, type RecordContext } from '../engine/record-builder.js';
import { inFlightTailStart } from '../recovery/in-flight-tail.js';
import { buildConversation } from '../session/conversation-loader.js';
import type { ChatRecord } from '../session/records.js';
import type { SessionRef, SessionStore, WriterLease } from '../store/session-store.js';

export interface ForkOptions {
  /** The source is held by a live process: leave its unfinished turn out. */
  sourceRunning: boolean;
}

export interface ForkResult {
  /** Records of the source's unfinished turn left out (0 when none were). */
  omittedRecords: number;
}

export async function forkInto(store: SessionStore, source: SessionRef, lease: WriterLease, ctx: RecordContext, options: ForkOptions): Promise<ForkResult> {
  const read = await store.read(source);
  const sourceSessionId = read.sessionId ?? source.sessionId;
  let copied = read.records;
  let leaf = read.records.at(-1)?.record.uuid ?? null;
  let omitted: { fromUuid: string; records: number } | undefined;
  if (options.sourceRunning) {
    const conversation = buildConversation(read).conversation;
    const start = inFlightTailStart(conversation);
    const prompt = start === null ? undefined : conversation.records[start];
    const at = prompt === undefined ? -1 : read.records.findIndex((r) => r.record === prompt);
    if (prompt !== undefined && at >= 0) {
      // Everything written from the prompt on belongs to the run still in progress.
      copied = read.records.slice(0, at);
      leaf = prompt.parentUuid ?? null;
      omitted = { fromUuid: prompt.uuid, records: read.records.length - at };
    }
  }
  const builder = new RecordBuilder(ctx, leaf);
  await lease.createWith([
    ...copied.map(({ record }) => ({ ...record, sessionId: ctx.sessionId }) as ChatRecord),
    builder.system('parent_session', {
      sourceSessionId,
      sourceLeafUuid: leaf,
      sourcePath: source.location,
      ...(omitted ? { omittedInFlightTail: omitted } : {}),
    }),
  ]);
  return { omittedRecords: omitted?.records ?? 0 };
}
