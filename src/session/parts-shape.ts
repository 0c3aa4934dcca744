/**
 * A type the planner and the outline reader share: how an entry's parts look when the
 * planner only counts them (recovery/history-source.ts). It lives here, outside the
 * outline wing, so the pure planner can name it without importing the wing.
 */
import type { Part } from './records.js';

/**
 * A record's parts with the ids of its calls and results held apart: what a plan reads of
 * the many entries it only counts (repairHistory's keepFrom), without making their parts
 * (making them was a third of a 100k-record plan). `parts` is one frozen array
 * for every record of the shape: its calls and results hold their name and, where the
 * record's has an id, a placeholder (record-outline.ts BLANK_ID) instead of it; `id(n)` is the record's
 * n-th id (calls and results in part order, a part's call before its result, as
 * `template` reads them), undefined for one without.
 */
export interface PartsShape {
  readonly parts: readonly Part[];
  id(n: number): string | undefined;
}
