/**
 * The SessionRecoveryPlan: the one value recovery decides for a session's tail (its kind,
 * the history as recorded and as safe to send, the repairs, whether and how it may
 * continue, the notice), plus mend's additions: diagnostics, leafUuid, cause and
 * previousAttempts.
 */
import type { ActiveWriter } from '../session/active-writer.js';
import type { ConversationRecord, HistoryGap, LoadDiagnostic } from '../session/conversation.js';
import type { Content, Part, RecoveryRepair, SessionRecoveryKind } from '../session/records.js';

export type { ActiveWriter, RecoveryRepair, SessionRecoveryKind };

/**
 * What the tail says about how the last turn ended. `running`: another process holds
 * the session's write lease right now (an input, see BuildPlanInput.activeWriter);
 * `failed`: the run ended with a known error and wrote a `turn_failed` marker.
 */
export type RecoveryCause = 'none' | 'crash' | 'aborted' | 'unknown' | 'running' | 'failed';

/** The error a failed run recorded (`turn_failed` marker). */
export interface RecoveryLastError {
  code: string;
  message: string;
}

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
export interface SessionRecoveryPlan extends RecoveryPlanHead {
  /** The history as written (system records excluded), before any repair. A view of the records: never change it. */
  originalApiHistory: Content[];
  /** Provider-safe repaired history: exactly what gets sent. Shares what the repair left unchanged with originalApiHistory. */
  apiHistory: Content[];
}

/**
 * A plan without its two histories: everything the policy, the recovery line and every
 * summary read. A plan built from a session's outline is this (a plain value); the
 * histories are read by an explicit call (SessionRuntime.loadHistory).
 */
export interface RecoveryPlanHead {
  planId: string;
  sessionId: string;
  kind: SessionRecoveryKind;
  /** The number of entries of the repaired history (`apiHistory.length` of the full plan). */
  apiEntryCount: number;
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
  /** The live holder of the session's write lease (cause `running`), or null. */
  activeWriter: ActiveWriter | null;
  /** The error of a failed run (cause `failed`), or null. */
  lastError: RecoveryLastError | null;
  /** Subagent transcript records (`isSidechain`) set aside: not part of the main history or its plan. */
  sidechainRecords: number;
}

/**
 * The history before the first entry a plan is given, summarised: what a plan over the
 * whole history would list and count for those entries (a plan checkpoint's, which reads
 * only the entries from the last model entry on). Their repairs come first, before those
 * of the entries given, and their repaired entries count in apiEntryCount.
 */
export interface HistoryBefore {
  repairs: RecoveryRepair[];
  /** Entries of the repaired history that the entries before give. */
  entries: number;
}

export interface BuildPlanInput {
  sessionId: string;
  conversation: ConversationRecord;
  historyGaps?: HistoryGap[];
  diagnostics?: LoadDiagnostic[];
  options?: { allowAutoContinue?: boolean };
  /**
   * Who is writing the session right now, as the store reports its lease holder; null or
   * absent when nobody is. A live session is not a crash: the plan says `running`.
   */
  activeWriter?: ActiveWriter | null;
  /**
   * The history as written, when the caller built it (apiHistoryView of the conversation
   * otherwise): a plan over a session's outline passes the outline's history, whose
   * entries before the last model entry carry only what the plan rules read.
   */
  originalApiHistory?: Content[];
  /** Set when the history given starts after earlier entries a checkpoint summarised. */
  before?: HistoryBefore;
}
