/**
 * Plan -> the summaries every entrypoint shows: the snake_case one of the
 * stream-json recovery line (`initialize`, `get_recovery_plan`), and the
 * camelCase one of the protocols that follow (ACP, daemon, SDK helpers).
 */
import type { RecoveryPlanHead } from '../../recovery/plan-types.js';
import type { ConversationHead } from '../../session/conversation.js';
import type { RecoverySummary } from '../../wire/messages.js';
import type { RecoverySummaryCamel } from '../../wire/recovery-summary.js';

export function countRepairs(repairs: ReadonlyArray<{ type: string }>): Array<{ type: string; count: number }> {
  const counts = new Map<string, number>();
  for (const r of repairs) counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => ({ type, count }));
}

function historyCounts(plan: RecoveryPlanHead, conversation: ConversationHead) {
  return {
    records: conversation.totalRecords,
    apiEntries: plan.apiEntryCount,
    gaps: plan.repairs.filter((r) => r.type === 'history_gap').length,
    malformedLines: plan.diagnostics.filter((d) => d.code === 'malformed_line').length,
    tornTail: plan.diagnostics.some((d) => d.code === 'torn_tail'),
    sidechainRecords: plan.sidechainRecords,
  };
}

export function toRecoverySummary(plan: RecoveryPlanHead, conversation: ConversationHead): RecoverySummary {
  const history = historyCounts(plan, conversation);
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
      records: history.records,
      api_entries: history.apiEntries,
      gaps: history.gaps,
      malformed_lines: history.malformedLines,
      torn_tail: history.tornTail,
      sidechain_records: history.sidechainRecords,
    },
    active_writer: plan.activeWriter,
    last_error: plan.lastError ? { ...plan.lastError } : null,
    ...(conversation.origin
      ? {
          agent: conversation.origin.agent,
          agent_version: conversation.origin.agentVersion,
          source: {
            path: conversation.origin.path,
            sha256: conversation.origin.sha256,
            session_id: conversation.origin.sessionId,
            imported: conversation.origin.imported,
            ...(conversation.origin.planId ? { plan_id: conversation.origin.planId } : {}),
          },
        }
      : {}),
  };
}

export function toRecoverySummaryCamel(plan: RecoveryPlanHead, conversation: ConversationHead): RecoverySummaryCamel {
  return {
    planId: plan.planId,
    recovered: plan.kind !== 'clean',
    kind: plan.kind,
    recoveryKind: plan.kind,
    cause: plan.cause,
    canContinue: plan.canContinue,
    canAutoContinue: plan.canAutoContinue,
    requiresUserConfirmation: plan.requiresUserConfirmation,
    previousAttempts: plan.previousAttempts,
    repairs: countRepairs(plan.repairs),
    visibleNotice: plan.visibleNotice ?? null,
    activeWriter: plan.activeWriter,
    lastError: plan.lastError ? { ...plan.lastError } : null,
    continuation: plan.continuation
      ? { mode: plan.continuation.mode, displayText: plan.continuation.displayText, partCount: plan.continuation.parts.length }
      : null,
    history: historyCounts(plan, conversation),
    ...(conversation.origin
      ? {
          agent: conversation.origin.agent,
          agentVersion: conversation.origin.agentVersion,
          source: {
            path: conversation.origin.path,
            sha256: conversation.origin.sha256,
            sessionId: conversation.origin.sessionId,
            imported: conversation.origin.imported,
            ...(conversation.origin.planId ? { planId: conversation.origin.planId } : {}),
          },
        }
      : {}),
  };
}
