/**
 * What the loader and the planner read of a session (src/runtime/outline-plan.ts): its
 * records by index, their parts as the plan rules see them, and the full records of any
 * positions on demand. Both readers of the wing produce it (history-reader.ts).
 */
import type { RecordSource } from '../conversation-loader.js';
import type { ReadResult } from '../log-reader.js';
import type { PartsShape } from '../parts-shape.js';
import type { Part } from '../records.js';
import type { RecordIndexEntry } from './record-index.js';

/** What a plan is built from: a store's records by index, with their parts as the plan rules see them. */
export interface SessionOutline {
  /** What readSessionLog returns, but the records. */
  read: Omit<ReadResult, 'records'>;
  /** The session's records (fragments merged), in file order, for the loader. */
  source: RecordSource;
  /** The parts of record `i` as the plan rules see them (outlines of the record's parts), or null for a system record. */
  outlineParts(i: number): readonly Part[] | null;
  /**
   * Record `i`'s parts as a PartsShape (ids held apart), where the outline has them that
   * way; else undefined (outlineParts then). Reused: valid until the next call.
   */
  partsShape?(i: number): PartsShape | undefined;
  /** The cwd record `i` names, if any. */
  cwd(i: number): string | undefined;
  /** The number of parts of record `i` (0 for a system record). */
  partCount(i: number): number;
  /** Whether record `i` is a model entry that stays one after the repair (model-entry.ts keepsModelEntry). */
  keepsModelEntry(i: number): boolean;
  /** What the outline keeps of every record, as indexRecords gives it from the full read (what tests compare). */
  indexEntries(): RecordIndexEntry[];
  /** Set when the store has no outline pass: its full read (records whole). */
  whole?: ReadResult;
}
