/**
 * The provider-facing history of a conversation, as written: the compressed
 * history (if any) followed by one Content per non-system chain record.
 * Repairs (dangling calls, orphan results, merging same-role turns) belong to
 * the recovery service, not here. Pure.
 */
import type { ConversationRecord } from './conversation.js';
import type { ChatRecord, Content, Part } from './records.js';

export function buildApiHistory(conv: ConversationRecord): Content[] {
  const history: Content[] = conv.compressedHistory ? (cloneJson(conv.compressedHistory) as Content[]) : [];
  for (const record of conv.records) {
    if (record.type === 'system') continue;
    const parts = record.message.parts;
    if (parts.length === 0) continue;
    // Cloned so that callers repairing the history cannot reach into the records.
    history.push({ role: record.type === 'assistant' ? 'model' : 'user', parts: cloneJson(parts) as Part[] });
  }
  return history;
}

/**
 * buildApiHistory without the clone: the entries hold the records' own parts
 * arrays (and the checkpoint's own entries). Same value, no copy; for callers
 * that never change the result or the records (buildSessionRecoveryPlan).
 */
export function apiHistoryView(conv: ConversationRecord): Content[] {
  const history: Content[] = conv.compressedHistory ? [...conv.compressedHistory] : [];
  pushEntries(history, conv.records);
  return history;
}

/** Appends the entries of `records` (one per non-system record with parts, holding its own parts array) to `history`. */
export function pushEntries(history: Content[], records: readonly ChatRecord[]): Content[] {
  for (const record of records) {
    if (record.type === 'system') continue;
    const parts = record.message.parts;
    if (parts.length === 0) continue;
    history.push({ role: record.type === 'assistant' ? 'model' : 'user', parts });
  }
  return history;
}

const MAX_FAST_DEPTH = 200;

/**
 * Deep clone for JSON-shaped data, several times faster than structuredClone
 * on the many small objects of a long history. Anything that is not a plain
 * object, array or primitive (or nests absurdly deep) goes to structuredClone.
 */
export function cloneJson(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_FAST_DEPTH) return structuredClone(value);
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJson(value[i], depth + 1);
    return out;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = cloneJson((value as Record<string, unknown>)[key], depth + 1);
    // Plain assignment to "__proto__" would set the prototype instead of a key.
    if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}
