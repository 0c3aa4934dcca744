/**
 * The provider-facing history of a conversation, as written: the compressed
 * history (if any) followed by one Content per non-system chain record.
 * Repairs (dangling calls, orphan results, merging same-role turns) belong to
 * the recovery service, not here. Pure.
 */
import type { ConversationRecord } from './conversation.js';
import type { Content } from './records.js';

export function buildApiHistory(conv: ConversationRecord): Content[] {
  const history: Content[] = conv.compressedHistory ? structuredClone(conv.compressedHistory) : [];
  for (const record of conv.records) {
    if (record.type === 'system') continue;
    const parts = record.message.parts;
    if (parts.length === 0) continue;
    // Cloned so that callers repairing the history cannot reach into the records.
    history.push({ role: record.type === 'assistant' ? 'model' : 'user', parts: structuredClone(parts) });
  }
  return history;
}
