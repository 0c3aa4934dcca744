/**
 * The storage seam. The runtime and every front end see a SessionStore and
 * SessionRefs, never a path: JSONL files are the embedded default, PostgreSQL a
 * shared store behind the same interface (and the same contract suite).
 *
 * Reading has two paths: `read` gives every full record in write order (what a model
 * request or a replay needs); `readOutline` gives what the planner reads (a HistoryReader's
 * SessionOutline, src/session/outline/history-reader.ts), which a file store makes
 * without holding every record. Diagnostics are store-neutral: a store that cannot tear
 * a line reports no torn tail and no malformed lines.
 */
import type { ActiveWriter } from '../session/active-writer.js';
import type { HistoryReadOptions, SessionOutline } from '../session/outline/history-reader.js';
import type { ChatRecord } from '../session/records.js';
import type { ReadResult } from './session-reads.js';

export type { ReadResult } from './session-reads.js';
import type { ForeignAgent } from '../foreign/adapter.js';

export type StoreKind = 'jsonl' | 'postgres';

/** A session in a store. `location` is for messages only (a file path, or a database and id). */
export interface SessionRef {
  readonly store: StoreKind;
  readonly sessionId: string;
  /** The project root the session belongs to (where it was opened from). */
  readonly projectRoot: string;
  readonly location: string;
  /** Set for another agent's session file, read in place: never written, never leased (src/store/foreign-sources.ts). */
  readonly foreign?: { readonly agent: ForeignAgent };
}

/** Who is taking a writer lease: reported to others as the session's activeWriter. */
export interface WriterIdentity {
  host: string;
  pid: number;
}

export interface AppendOptions {
  /** Committed (fsync / synchronous commit) before append resolves: a record a crash must not lose. */
  durable: boolean;
}

/** The single writer of one session. Appends are chained by the caller; the lease only stores them. */
export interface WriterLease {
  readonly ref: SessionRef;
  readonly holder: ActiveWriter;
  append(record: ChatRecord, options: AppendOptions): Promise<void>;
  /**
   * Optional (added for import into a database): several records in order, all
   * or none. Without it callers append one by one.
   */
  appendBatch?(records: readonly ChatRecord[], options: AppendOptions): Promise<void>;
  /**
   * Creates the leased session holding these records, whole or not at all (a fork, an import): no
   * reader (read, list, latest, exists) sees any of it before all of it, a crash leaves
   * the session either absent or complete, and it is durable when this resolves. At least
   * one record, for a session with none yet (else `session_exists`); appends then follow it.
   */
  createWith(records: readonly ChatRecord[]): Promise<void>;
  /**
   * Proves, now, that this lease is still the session's current one (PostgreSQL: a
   * statement under the writer's epoch on its own connection, never a cached flag;
   * JSONL: the lock file is still the one this writer created). Rejects with
   * `session_lease_lost` when another writer has taken over, and from then on every
   * append fails too. Called right before every side effect (a tool start, acting on
   * a permission answer): a writer that lost its lease must not act.
   */
  verify(): Promise<void>;
  /** Idempotent. Nothing may be appended after it. */
  release(): Promise<void>;
}

export interface SessionListing {
  ref: SessionRef;
  /** First and last record timestamps, when known. */
  started: string | null;
  lastUpdate: string | null;
  records: number;
  firstPrompt: string | null;
  /** Optional (added for the PostgreSQL store, which keeps it): the session's title from its latest `custom_title` record. */
  title?: string;
  /** Present when the session could not be read; the other fields are then best effort. */
  error?: { code: string; message: string };
}

/** A session log found by SessionStore.listLogs; `error` when even its end could not be read. */
export interface LogListing {
  ref: SessionRef;
  error?: { code: string; message: string };
}

/** A session log and the cache file of its plan checkpoint (SessionStore.checkpointSlot). */
export interface PlanCheckpointSlot {
  readonly kind?: 'file';
  /** The log, read but never written. */
  path: string;
  /** Its checkpoint, in mend's own cache (never beside the log). */
  cacheFile: string;
  /** How the store reads the log (ReadOptions and the outline reader's). */
  readOptions: HistoryReadOptions;
  /** Where a checkpoint that is not used says why (a debug log), if anywhere. */
  note?: ((message: string) => void) | undefined;
  /**
   * A log shorter than this is read whole and gets no checkpoint (its full pass costs about
   * what reading a checkpoint and its window does). Default: DEFAULT_CHECKPOINT_MIN_BYTES.
   */
  minBytes?: number | undefined;
}

/**
 * A session kept as rows (PostgreSQL) and the row of its plan checkpoint
 * (SessionStore.checkpointSlot): what the checkpoint wing (src/runtime/checkpoint) reads and
 * writes through, never SQL. Seqs are dense, 1..lastSeq; the outlines count positions so that
 * seq `from` is line 1 (a whole read: line = seq).
 */
export interface RowCheckpointSlot {
  readonly kind: 'rows';
  /** The session, for notes. */
  readonly label: string;
  /**
   * The stored checkpoint of this summary version, once the store checked that it is whole
   * (its CRC) and still describes the session's rows (identity); else why not, with the
   * session's last seq when known (null: no such session, or not known). Never writes.
   */
  read(version: number): Promise<StoredRowCheckpoint | { missing: true; lastSeq: number | null } | { unusable: string; lastSeq: number | null }>;
  /**
   * The session's rows as the plain read gives them (throws what `read` throws), with its
   * last seq and the change count a checkpoint of them is written under (null: none can be).
   */
  readAll(): Promise<{ outline: SessionOutline; lastSeq: number; changes: number | null }>;
  /** Rows `from`..`to` (seqs) as an outline whose line 1 is seq `from`. Never writes. */
  readRows(from: number, to: number): Promise<SessionOutline>;
  /**
   * Stores the checkpoint (replacing the session's previous one) when the rows it names are
   * still there and nothing changed them since `changes` was read. False when it was not
   * written for that reason; throws when the write failed (a read-only user, a lost server).
   */
  write(checkpoint: RowCheckpointWrite): Promise<boolean>;
  /** Where a checkpoint that is not used says why (a debug log), if anywhere. */
  note?: ((message: string) => void) | undefined;
}

/** A checkpoint row the store found whole and matching the session's rows. */
export interface StoredRowCheckpoint {
  /** The window starts at this seq; the rows before it are the summarised prefix. */
  cutSeq: number;
  /** The last seq the checkpoint was made from, and the session's last seq now (>= it). */
  coveredSeq: number;
  lastSeq: number;
  /** The change count it was made under (equal to the session's now). */
  changes: number;
  /** What the checkpoint wing stored: its text. */
  body: string;
  /**
   * Its uuid filter's bits, read only when asked for (they are the bulk of the row and a read
   * of an unchanged session needs none); null when they are torn or the row was rewritten since.
   */
  readBloom(): Promise<Uint8Array | null>;
}

export interface RowCheckpointWrite {
  version: number;
  cutSeq: number;
  coveredSeq: number;
  changes: number;
  body: string;
  bloom: Uint8Array;
}

/** Where a store keeps the plan checkpoint of a session: a cache file beside nothing, or a row. */
export type CheckpointSlot = PlanCheckpointSlot | RowCheckpointSlot;

export interface ProjectScope {
  /** Real path of the project root. */
  projectRoot: string;
  /** Base for relative paths in a --resume argument. */
  cwd: string;
}

export interface SessionStore {
  readonly kind: StoreKind;
  /** The ref of a session that does not exist yet; nothing is written until the first append. */
  newSession(scope: ProjectScope, sessionId: string): Promise<SessionRef>;
  /** A --resume argument (a session id, or for file stores a path) to a ref; malformed ones are refused before any I/O. */
  resolve(scope: ProjectScope, target: string): Promise<SessionRef>;
  /** The session of this project written most recently, or null. */
  latest(scope: ProjectScope): Promise<SessionRef | null>;
  list(scope: ProjectScope): Promise<SessionListing[]>;
  /**
   * Optional (a file store): the project's sessions without reading them, newest first by
   * the time of each log's last timestamped line (one small read from its end); what a
   * listing that plans each session itself starts from (src/runtime/list-sessions.ts).
   */
  listLogs?(scope: ProjectScope): Promise<LogListing[]>;
  exists(ref: SessionRef): Promise<boolean>;
  /** Every record in write order, validated and fragment-merged, with store-neutral diagnostics. Never writes. */
  read(ref: SessionRef): Promise<ReadResult>;
  /**
   * Optional: every stored line in write order exactly as stored, without its
   * newline (a file store also yields blank, torn and garbage lines). What
   * export copies byte for byte; without it export re-serializes the records.
   * Never writes.
   */
  readLines?(ref: SessionRef): AsyncIterable<string>;
  /**
   * What a plan is built from: what `read(ref)` gives, as a SessionOutline (records that may
   * be outlines, the full records of any positions on demand), from one of the wing's
   * HistoryReaders. A store without byte ranges returns its full read (`whole`). Never writes.
   */
  readOutline(ref: SessionRef): Promise<SessionOutline>;
  /**
   * Optional (a store with plan checkpoints on): where the checkpoint of the plan of a
   * session lives (src/runtime/checkpoint): a file in mend's cache for a log, a row for a
   * PostgreSQL session; null for one that has none (another agent's format, checkpoints
   * off). Never writes.
   */
  checkpointSlot?(ref: SessionRef): CheckpointSlot | null;
  /** The live holder of the writer lease, or null. Never writes. */
  activeWriter(ref: SessionRef): Promise<ActiveWriter | null>;
  /** Takes the single-writer lease; a live holder is refused with session_locked naming it. */
  acquire(ref: SessionRef, who: WriterIdentity): Promise<WriterLease>;
  /** Releases what the store holds (connections); leases must be released first. */
  close(): Promise<void>;
}
