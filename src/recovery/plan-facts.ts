/**
 * Facts about a plan that are known without its histories. A plan built from a
 * session's outline (issue 11) produces `apiHistory` only when something reads it;
 * the recovery line needs just its length, which the builder records here so that
 * showing the plan never forces the whole history into memory.
 */
import type { SessionRecoveryPlan } from './plan-types.js';

const apiEntryCounts = new WeakMap<SessionRecoveryPlan, number>();

/** Records the number of entries of `plan.apiHistory` (for a plan whose history is produced on demand). */
export function rememberApiEntryCount(plan: SessionRecoveryPlan, count: number): void {
  apiEntryCounts.set(plan, count);
}

/** `plan.apiHistory.length`, without producing the history when the count is known. */
export function apiEntryCount(plan: SessionRecoveryPlan): number {
  return apiEntryCounts.get(plan) ?? plan.apiHistory.length;
}
