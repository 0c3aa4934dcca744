/**
 * Records that share a uuid are fragments of one record (Qwen Code may write a
 * record in pieces). Merging follows Qwen Code's aggregation: the first piece is
 * the record (its type, role, parentUuid and every other field win: a later piece
 * must not move the record elsewhere in the chain and open a gap), `message.parts`
 * concatenate in file order, `usageMetadata` comes from the last piece that has one
 * (usage is reported last) and `timestamp` is the latest one.
 *
 * Pieces of another type are not fragments; the reader sets them aside before
 * merging (see log-reader.ts), so all pieces handed to mergePieces share a type.
 */
import type { ChatRecord } from './records.js';

export type MergeResult = { ok: true; record: ChatRecord } | { ok: false; reason: string };

function partsOf(record: object): unknown[] | undefined {
  const message = (record as { message?: unknown }).message;
  if (typeof message !== 'object' || message === null) return undefined;
  const parts = (message as { parts?: unknown }).parts;
  return Array.isArray(parts) ? parts : undefined;
}

/**
 * One record from all its pieces (file order, same type), in one pass: merging
 * pairwise copied the growing parts array for every piece, quadratic in the number
 * of pieces (40k pieces took 100 s). Never mutates its inputs.
 */
export function mergePieces(pieces: readonly ChatRecord[]): ChatRecord {
  const first = pieces[0]!;
  if (pieces.length === 1) return first;
  const merged: Record<string, unknown> = { ...first };
  const firstParts = partsOf(first);
  const parts: unknown[] = firstParts ? [...firstParts] : [];
  let sawParts = firstParts !== undefined;
  for (let i = 1; i < pieces.length; i++) {
    const piece = pieces[i] as Record<string, unknown>;
    const more = partsOf(piece);
    if (more) {
      sawParts = true;
      for (let k = 0; k < more.length; k++) parts.push(more[k]);
    }
    if (piece.usageMetadata !== undefined) merged.usageMetadata = piece.usageMetadata;
    if (typeof piece.timestamp === 'string' && piece.timestamp > String(merged.timestamp)) merged.timestamp = piece.timestamp;
  }
  if (sawParts && firstParts) merged.message = { ...(first as { message: object }).message, parts };
  return merged as ChatRecord;
}

/** Two pieces of one record (see mergePieces); pieces of different types do not merge. */
export function mergeFragments(earlier: ChatRecord, later: ChatRecord): MergeResult {
  if (earlier.type !== later.type) {
    return { ok: false, reason: `fragment conflicts with an earlier one of type ${earlier.type}: type ${later.type}` };
  }
  return { ok: true, record: mergePieces([earlier, later]) };
}
