/**
 * The one projection of a recovery plan into what every front end shows: plain
 * values, camelCase, no histories. The wire summaries (the snake_case recovery
 * line, the camelCase one of ACP and the daemon) and `mend plan --json` are all
 * derived from it (src/frontends/shared/recovery-summary.ts), so a field means
 * the same everywhere. It carries the lease holder the runtime last saw.
 */
import type { RecoveryCause, RecoveryLastError, RecoveryRepair, SessionRecoveryKind, RecoveryPlanHead, ContinuationMode } from '../recovery/plan-types.js';
import type { ActiveWriter } from '../session/active-writer.js';
import type { ConversationHead, SessionOrigin } from '../session/conversation.js';

export interface PlanSummary {
  planId: string;
  sessionId: string;
  kind: SessionRecoveryKind;
  /** Anything but `clean`. */
  recovered: boolean;
  cause: RecoveryCause;
  canContinue: boolean;
  canAutoContinue: boolean;
  requiresUserConfirmation: boolean;
  previousAttempts: number;
  visibleNotice: string | null;
  /** The repairs counted by type, in the order each type first appears. */
  repairs: Array<{ type: string; count: number }>;
  /** Every repair as the plan lists it. */
  repairDetails: RecoveryRepair[];
  continuation: { mode: ContinuationMode; displayText: string; partCount: number } | null;
  history: { records: number; apiEntries: number; gaps: number; malformedLines: number; tornTail: boolean; sidechainRecords: number };
  /** Another live process holds the session (cause `running`). */
  activeWriter: ActiveWriter | null;
  lastError: RecoveryLastError | null;
  /** Another agent wrote the session (read in place or imported): who, and from where. */
  origin: SessionOrigin | null;
}

export function countRepairs(repairs: ReadonlyArray<{ type: string }>): Array<{ type: string; count: number }> {
  const counts = new Map<string, number>();
  for (const r of repairs) counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => ({ type, count }));
}

export function summarizePlan(plan: RecoveryPlanHead, conversation: ConversationHead): PlanSummary {
  return {
    planId: plan.planId,
    sessionId: plan.sessionId,
    kind: plan.kind,
    recovered: plan.kind !== 'clean',
    cause: plan.cause,
    canContinue: plan.canContinue,
    canAutoContinue: plan.canAutoContinue,
    requiresUserConfirmation: plan.requiresUserConfirmation,
    previousAttempts: plan.previousAttempts,
    visibleNotice: plan.visibleNotice ?? null,
    repairs: countRepairs(plan.repairs),
    repairDetails: structuredClone(plan.repairs),
    continuation: plan.continuation
      ? { mode: plan.continuation.mode, displayText: plan.continuation.displayText, partCount: plan.continuation.parts.length }
      : null,
    history: {
      records: conversation.totalRecords,
      apiEntries: plan.apiEntryCount,
      gaps: plan.repairs.filter((r) => r.type === 'history_gap').length,
      malformedLines: plan.diagnostics.filter((d) => d.code === 'malformed_line').length,
      tornTail: plan.diagnostics.some((d) => d.code === 'torn_tail'),
      sidechainRecords: plan.sidechainRecords,
    },
    activeWriter: plan.activeWriter ? { ...plan.activeWriter } : null,
    lastError: plan.lastError ? { ...plan.lastError } : null,
    origin: conversation.origin ? { ...conversation.origin } : null,
  };
}
