/**
 * Records that share a uuid are fragments of one record (Qwen Code may write a
 * record in pieces). Merging rule: `message.parts` concatenate in file order,
 * every other field of the later fragment wins.
 */
import type { ChatRecord } from './records.js';
import { validateChatRecord } from './record-validation.js';

export type MergeResult = { ok: true; record: ChatRecord } | { ok: false; reason: string };

function partsOf(record: object): unknown[] | undefined {
  const message = (record as { message?: unknown }).message;
  if (typeof message !== 'object' || message === null) return undefined;
  const parts = (message as { parts?: unknown }).parts;
  return Array.isArray(parts) ? parts : undefined;
}

/** Never mutates its inputs: earlier fragments may already be referenced elsewhere. */
export function mergeFragments(earlier: ChatRecord, later: ChatRecord): MergeResult {
  const merged: Record<string, unknown> = { ...earlier, ...later };
  const earlierParts = partsOf(earlier);
  const laterParts = partsOf(later);
  if (earlierParts && laterParts) {
    merged.message = { ...(earlier as { message: object }).message, ...(later as { message: object }).message, parts: [...earlierParts, ...laterParts] };
  }
  // Same-type fragments stay valid by construction (each field comes from a valid
  // record of that type); a type change can leave e.g. a model message on a user
  // record, so only then is the result checked again.
  if (earlier.type === later.type) return { ok: true, record: merged as ChatRecord };
  const check = validateChatRecord(merged);
  return check.ok ? check : { ok: false, reason: `fragment conflicts with an earlier one of type ${earlier.type}: ${check.reason}` };
}
