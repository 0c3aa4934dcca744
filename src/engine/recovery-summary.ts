/**
 * Plan -> the snake_case summary every entrypoint shows: the recovery line,
 * `mend plan --json`'s wire twin, `initialize` and `get_recovery_plan`.
 */
import type { SessionRecoveryPlan } from '../recovery/plan-types.js';
import type { ConversationRecord } from '../session/conversation.js';
import type { RecoverySummary } from '../stream/messages.js';

export function countRepairs(repairs: ReadonlyArray<{ type: string }>): Array<{ type: string; count: number }> {
  const counts = new Map<string, number>();
  for (const r of repairs) counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => ({ type, count }));
}

export function toRecoverySummary(plan: SessionRecoveryPlan, conversation: ConversationRecord): RecoverySummary {
  return {
    plan_id: plan.planId,
    kind: plan.kind,
    recovered: plan.kind !== 'clean',
    cause: plan.cause,
    can_continue: plan.canContinue,
    can_auto_continue: plan.canAutoContinue,
    requires_user_confirmation: plan.requiresUserConfirmation,
    previous_attempts: plan.previousAttempts,
    visible_notice: plan.visibleNotice ?? null,
    repairs: countRepairs(plan.repairs),
    repair_details: structuredClone(plan.repairs),
    continuation: plan.continuation
      ? { mode: plan.continuation.mode, display_text: plan.continuation.displayText, part_count: plan.continuation.parts.length }
      : null,
    history: {
      records: conversation.totalRecords,
      api_entries: plan.apiHistory.length,
      gaps: plan.repairs.filter((r) => r.type === 'history_gap').length,
      malformed_lines: plan.diagnostics.filter((d) => d.code === 'malformed_line').length,
      torn_tail: plan.diagnostics.some((d) => d.code === 'torn_tail'),
    },
  };
}
