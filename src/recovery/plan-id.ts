/**
 * Plan ids come from content, not length: Qwen's `sessionId:historyLength` gives a
 * clean and an interrupted history of equal length the same id.
 *
 * Format: `rp_` followed by 16 lowercase hex digits, the first 64 bits of the
 * SHA-256 of the canonical JSON of [sessionId, leafUuid, kind, interrupted tail].
 * Hashing is pure computation: no I/O, clock or randomness.
 */
import { createHash } from 'node:crypto';
import type { Content, SessionRecoveryKind } from '../session/records.js';

export const PLAN_ID_PATTERN = /^rp_[0-9a-f]{16}$/;

export function derivePlanId(input: { sessionId: string; leafUuid: string | null; kind: SessionRecoveryKind; tail: readonly Content[] }): string {
  const canonical = JSON.stringify([input.sessionId, input.leafUuid, input.kind, input.tail]);
  return `rp_${createHash('sha256').update(canonical).digest('hex').slice(0, 16)}`;
}
