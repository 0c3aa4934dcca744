/**
 * Facts about a conversation that are known without its full records. A conversation
 * loaded from a session's outline (issue 11) reads its records only when something
 * asks for them; the recovery line needs just the directory the session was recorded
 * in, which the loader records here so that showing the plan never forces every
 * record into memory.
 */
import type { ConversationRecord } from './conversation.js';

const recordedCwds = new WeakMap<ConversationRecord, string | null>();

/** Records the cwd of the last chain record that names one (null: none does). */
export function rememberRecordedCwd(conversation: ConversationRecord, cwd: string | null): void {
  recordedCwds.set(conversation, cwd);
}

/** The cwd of the last record of the active chain that names one. */
export function recordedCwd(conversation: ConversationRecord): string | undefined {
  const known = recordedCwds.get(conversation);
  if (known !== undefined) return known ?? undefined;
  return lastCwd(conversation.records);
}

export function lastCwd(records: ConversationRecord['records']): string | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const cwd = records[i]!.cwd;
    if (typeof cwd === 'string') return cwd;
  }
  return undefined;
}
