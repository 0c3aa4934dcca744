/**
 * The SessionRecoveryPlan of the design (section 2), plus mend's additions:
 * diagnostics, leafUuid, cause and previousAttempts.
 */
import type { ConversationRecord, HistoryGap, LoadDiagnostic } from '../session/conversation.js';
import type { Content, Part, RecoveryRepair, SessionRecoveryKind } from '../session/records.js';

export type { RecoveryRepair, SessionRecoveryKind };

/** What the tail says about how the last turn ended. */
export type RecoveryCause = 'none' | 'crash' | 'aborted' | 'unknown';

export type ContinuationMode = 'retry_user_parts' | 'tool_result_parts';

export interface RecoveryContinuation {
  mode: ContinuationMode;
  /** Exactly what follows the last model entry in `apiHistory`; never appended to it again. */
  parts: Part[];
  displayText: string;
  /** Call ids of the parts in `parts` that are synthetic (tool_result_parts only). */
  syntheticCallIds: string[];
}

/**
 * Plans are immutable values, and so is the LoadedSession a plan is built from:
 * nothing may change a plan, the conversation's records or anything they hold.
 * `originalApiHistory` is a view of the records (its entries hold the records'
 * own `message.parts` arrays) and `apiHistory` shares every entry and part the
 * repair left unchanged with it; only `continuation.parts` is a separate copy.
 * Copying a long history on every load cost a third of the planning time, and
 * no caller changes a plan: one that wants to change a history clones it
 * first, as AgentSession and createAgent do (structuredClone of apiHistory).
 */
export interface SessionRecoveryPlan {
  planId: string;
  sessionId: string;
  kind: SessionRecoveryKind;
  /** The history as written (system records excluded), before any repair. A view of the records: never change it. */
  originalApiHistory: Content[];
  /** Provider-safe repaired history: exactly what gets sent. Shares what the repair left unchanged with originalApiHistory. */
  apiHistory: Content[];
  repairs: RecoveryRepair[];
  canContinue: boolean;
  canAutoContinue: boolean;
  requiresUserConfirmation: boolean;
  visibleNotice?: string;
  continuation?: RecoveryContinuation;
  diagnostics: LoadDiagnostic[];
  leafUuid: string | null;
  cause: RecoveryCause;
  previousAttempts: number;
}

export interface BuildPlanInput {
  sessionId: string;
  conversation: ConversationRecord;
  historyGaps?: HistoryGap[];
  diagnostics?: LoadDiagnostic[];
  options?: { allowAutoContinue?: boolean };
}
