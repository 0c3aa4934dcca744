/**
 * Session logs can hold several entries of the same role in a row (a model entry per
 * streamed assistant record, a user entry per tool result). APIs that require strict
 * user/model alternation get one entry per run of the same role instead.
 */
import type { Content } from '../session/records.js';

/** Pure: returns new entries; the input history is not modified. */
export function mergeConsecutiveRoles(history: readonly Content[]): Content[] {
  const merged: Content[] = [];
  for (const entry of history) {
    const last = merged[merged.length - 1];
    if (last && last.role === entry.role) {
      last.parts = [...last.parts, ...entry.parts];
    } else {
      merged.push({ ...entry, parts: [...entry.parts] });
    }
  }
  return merged;
}
