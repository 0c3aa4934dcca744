/**
 * What the loader hands to the pure Recovery Service: the active chain of one
 * session, plus everything it noticed on the way, as values.
 */
import type { ChatRecord, Content, SystemRecord, TurnAbortReason } from './records.js';

/** Problems found while reading or loading. Never thrown: reported in the plan. */
export type LoadDiagnostic =
  | { code: 'torn_tail'; line: number; bytes: number }
  | { code: 'malformed_line'; line: number }
  | { code: 'invalid_record'; line: number; reason: string }
  | { code: 'mixed_session_id'; line: number; sessionId: string }
  | { code: 'parent_cycle'; uuid: string; beforeCheckpoint: boolean }
  | { code: 'invalid_system_payload'; uuid: string; subtype: string; reason: string };

export type LoadDiagnosticCode = LoadDiagnostic['code'];

export interface HistoryGap {
  childUuid: string;
  missingParentUuid: string;
  /** Found only before the latest compression checkpoint: reported, but does not degrade the session. */
  beforeCheckpoint: boolean;
}

/** One record as read from disk, with the 1-based line it came from (the first line for merged fragments). */
export interface ReadRecord {
  line: number;
  record: ChatRecord;
}

export interface ConversationRecord {
  sessionId: string;
  /** Last record in file order (system records included), or null for an empty log. */
  leafUuid: string | null;
  /** The active chain, oldest first, after the latest compression checkpoint; fragments merged. */
  records: ChatRecord[];
  /** History that replaces everything before the latest `chat_compression` on the chain. */
  compressedHistory: Content[] | null;
  /** Number of valid records read from the file (after fragment merging). */
  totalRecords: number;
  /** True when every versioned record from the last model entry on (the tail) was written by mend, and one is. */
  writtenByMend: boolean;
  /** System markers on the chain after the last model entry, oldest first. */
  afterLastModel: {
    turnAborted: Array<{ uuid: string; reason: TurnAbortReason }>;
    recoveryRecords: SystemRecord[];
  };
}

export interface LoadedSession {
  conversation: ConversationRecord;
  historyGaps: HistoryGap[];
  diagnostics: LoadDiagnostic[];
}
