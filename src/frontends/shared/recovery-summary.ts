/**
 * The wire shapes of the one plan projection (src/runtime/plan-summary.ts): the
 * snake_case summary of the stream-json recovery line (`initialize`,
 * `get_recovery_plan`) and the camelCase one of the protocols that follow (ACP,
 * daemon, SDK helpers). Field for field the same values, only named per protocol.
 */
import type { RecoveryPlanHead } from '../../recovery/plan-types.js';
import { summarizePlan, type PlanSummary } from '../../runtime/plan-summary.js';
import type { ConversationHead } from '../../session/conversation.js';
import type { RecoverySummary } from '../../wire/messages.js';
import type { RecoverySummaryCamel } from '../../wire/recovery-summary.js';

export { countRepairs } from '../../runtime/plan-summary.js';

/** The snake_case summary (the recovery line's fields, in the line's order). */
export function snakeSummary(s: PlanSummary): RecoverySummary {
  return {
    plan_id: s.planId,
    kind: s.kind,
    recovered: s.recovered,
    cause: s.cause,
    can_continue: s.canContinue,
    can_auto_continue: s.canAutoContinue,
    requires_user_confirmation: s.requiresUserConfirmation,
    previous_attempts: s.previousAttempts,
    visible_notice: s.visibleNotice,
    repairs: s.repairs.map((r) => ({ ...r })),
    repair_details: structuredClone(s.repairDetails),
    continuation: s.continuation ? { mode: s.continuation.mode, display_text: s.continuation.displayText, part_count: s.continuation.partCount } : null,
    history: {
      records: s.history.records,
      api_entries: s.history.apiEntries,
      gaps: s.history.gaps,
      malformed_lines: s.history.malformedLines,
      torn_tail: s.history.tornTail,
      sidechain_records: s.history.sidechainRecords,
    },
    active_writer: s.activeWriter ? { ...s.activeWriter } : null,
    last_error: s.lastError ? { ...s.lastError } : null,
    ...(s.origin
      ? {
          agent: s.origin.agent,
          agent_version: s.origin.agentVersion,
          source: {
            path: s.origin.path,
            sha256: s.origin.sha256,
            session_id: s.origin.sessionId,
            imported: s.origin.imported,
            ...(s.origin.planId ? { plan_id: s.origin.planId } : {}),
          },
        }
      : {}),
  };
}

/** The camelCase summary of ACP and the daemon. */
export function camelSummary(s: PlanSummary): RecoverySummaryCamel {
  return {
    planId: s.planId,
    recovered: s.recovered,
    kind: s.kind,
    recoveryKind: s.kind,
    cause: s.cause,
    canContinue: s.canContinue,
    canAutoContinue: s.canAutoContinue,
    requiresUserConfirmation: s.requiresUserConfirmation,
    previousAttempts: s.previousAttempts,
    repairs: s.repairs.map((r) => ({ ...r })),
    visibleNotice: s.visibleNotice,
    activeWriter: s.activeWriter ? { ...s.activeWriter } : null,
    lastError: s.lastError ? { ...s.lastError } : null,
    continuation: s.continuation ? { ...s.continuation } : null,
    history: { ...s.history },
    ...(s.origin
      ? {
          agent: s.origin.agent,
          agentVersion: s.origin.agentVersion,
          source: {
            path: s.origin.path,
            sha256: s.origin.sha256,
            sessionId: s.origin.sessionId,
            imported: s.origin.imported,
            ...(s.origin.planId ? { planId: s.origin.planId } : {}),
          },
        }
      : {}),
  };
}

export function toRecoverySummary(plan: RecoveryPlanHead, conversation: ConversationHead): RecoverySummary {
  return snakeSummary(summarizePlan(plan, conversation));
}

export function toRecoverySummaryCamel(plan: RecoveryPlanHead, conversation: ConversationHead): RecoverySummaryCamel {
  return camelSummary(summarizePlan(plan, conversation));
}
