/**
 * What the loader hands to the pure Recovery Service: the active chain of one
 * session, plus everything it noticed on the way, as values.
 */
import type { ChatRecord, Content, RecordType, SystemRecord, TurnAbortReason } from './records.js';

/** Problems found while reading or loading. Never thrown: reported in the plan. */
export type LoadDiagnostic =
  | { code: 'torn_tail'; line: number; bytes: number }
  | { code: 'malformed_line'; line: number }
  | { code: 'invalid_record'; line: number; reason: string }
  | { code: 'mixed_session_id'; line: number; sessionId: string }
  /** A line identical to an earlier line of the same record (a repeated write): read once. */
  | { code: 'repeated_line'; line: number; uuid: string }
  /**
   * A uuid reused by a record of another type (or message role): the first record keeps
   * the uuid, this one is set aside whole and carried here so nothing of it is lost.
   */
  | { code: 'conflicting_uuid'; line: number; uuid: string; keptType: RecordType; type: RecordType; record: ChatRecord }
  /** A later fragment names another parent than the first one, whose parent is kept (as Qwen Code does). */
  | { code: 'conflicting_parent_uuid'; line: number; uuid: string; keptParentUuid: string | null; parentUuid: string | null }
  | { code: 'parent_cycle'; uuid: string; beforeCheckpoint: boolean }
  | { code: 'invalid_system_payload'; uuid: string; subtype: string; reason: string }
  /** NUL bytes in a line (a power loss extends a file before its data is written); the rest of the line is read. */
  | { code: 'nul_bytes'; line: number; bytes: number }
  /** Rows of a type the reader of another agent's format does not know: counted, never fatal (`line`: the first). */
  | { code: 'unknown_row_type'; line: number; rowType: string; count: number }
  /** A row another agent's reader could not use (a known type in an unknown shape, a line out of order). */
  | { code: 'foreign_row_skipped'; line: number; rowType: string; reason: string }
  /** A Codex rollout line without the `ordinal` its other lines carry (read in file order all the same). */
  | { code: 'missing_ordinal'; line: number };

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
  /** The line of its last fragment, when that is not `line`: the leaf is the record of the file's last record line. */
  lastLine?: number;
}

/** A `turn_failed` marker: the run ended with a known error, not a crash. */
export interface TurnFailedMarker {
  uuid: string;
  code: string;
  message: string;
}

/**
 * Where a session came from when another agent wrote it: read in place (`imported`
 * false), or copied into mend's store (`imported` true, from its `foreign_import` record).
 */
export interface SessionOrigin {
  agent: string;
  agentVersion: string | null;
  /** The owner's session id. */
  sessionId: string | null;
  /** The file read. */
  path: string;
  /** SHA-256 of the bytes read (hex). */
  sha256: string;
  /** The plan id of the source as read in place (set once imported). */
  planId?: string | undefined;
  imported: boolean;
}

/**
 * What a loaded conversation is without its records: everything the plan and the recovery
 * line read. A conversation planned from a session's outline (src/runtime/outline-plan.ts)
 * is this, a plain value; its records are read by an explicit call when needed.
 */
export interface ConversationHead {
  sessionId: string;
  /** Last record in file order (system records included), or null for an empty log. */
  leafUuid: string | null;
  /** History that replaces everything before the latest `chat_compression` on the chain. */
  compressedHistory: Content[] | null;
  /** Number of valid records read from the file (after fragment merging). */
  totalRecords: number;
  /** True when every versioned record from the last model entry on (the tail) was written by mend, and one is. */
  writtenByMend: boolean;
  /**
   * System markers on the chain after the last model entry, oldest first. An assistant
   * record with nothing a provider would receive (no parts, empty parts, thoughts only)
   * is not a model entry, so it does not reset them.
   */
  afterLastModel: {
    turnAborted: Array<{ uuid: string; reason: TurnAbortReason }>;
    recoveryRecords: SystemRecord[];
    turnFailed?: TurnFailedMarker[];
    /**
     * The marker that ends the tail: the last `turn_aborted` or `turn_failed` after the
     * last model entry, unless a new prompt (a user record) or a recovery attempt followed it
     * (then the tail went on and crashed later: cause comes from the tail's end only).
     * Undefined for conversations built without it (the last marker then decides).
     */
    endedBy?: { subtype: 'turn_aborted' | 'turn_failed'; uuid: string } | null;
  };
  /** Records marked as a subagent's transcript (`isSidechain: true`), set aside: not the main history. */
  sidechainRecords?: number;
  /** The cwd of the last record of the active chain that names one, or null. */
  recordedCwd: string | null;
  /** Set for a session another agent wrote (read in place or imported). */
  origin?: SessionOrigin;
}

export interface ConversationRecord extends ConversationHead {
  /** The active chain, oldest first, after the latest compression checkpoint; fragments merged. */
  records: ChatRecord[];
}

/** A loaded session without its records (ConversationHead). */
export interface LoadedHead {
  conversation: ConversationHead;
  historyGaps: HistoryGap[];
  diagnostics: LoadDiagnostic[];
}

export interface LoadedSession extends LoadedHead {
  conversation: ConversationRecord;
}

/** The cwd of the last record that names one, or null. */
export function lastCwd(records: readonly ChatRecord[]): string | null {
  for (let i = records.length - 1; i >= 0; i--) {
    const cwd = records[i]!.cwd;
    if (typeof cwd === 'string') return cwd;
  }
  return null;
}
