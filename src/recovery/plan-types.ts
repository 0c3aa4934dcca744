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

export interface SessionRecoveryPlan {
  planId: string;
  sessionId: string;
  kind: SessionRecoveryKind;
  /** The history as written (system records excluded), before any repair. */
  originalApiHistory: Content[];
  /** Provider-safe repaired clone: exactly what gets sent. */
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
