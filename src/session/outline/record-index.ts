/**
 * Per record only what the plan rules need (chain links, type, call and result ids): what
 * an outline keeps of every record (SessionOutline.indexEntries), in a shape the reference
 * gives from a full read (indexRecords), so the case suite and the store contract can hold
 * the two equal.
 */
import type { LoadDiagnostic } from '../conversation.js';
import type { ReadResult } from '../../store/session-reads.js';
import { isMendVersion, type ChatRecord, type RecordType } from '../records.js';

export interface RecordIndexEntry {
  /** 1-based line (JSONL) or sequence number (database) of the record's first piece. */
  position: number;
  uuid: string;
  parentUuid: string | null;
  type: RecordType;
  subtype?: string;
  /** Ids of the function calls the record holds (empty ids as ''). Read-only: records without any share one empty array. */
  callIds: readonly string[];
  /** Ids of the function responses the record holds. Read-only, as callIds. */
  resultIds: readonly string[];
  /** Written by mend (version `mend/...`). */
  mend: boolean;
}

export interface RecordIndex {
  sessionId: string | null;
  entries: RecordIndexEntry[];
  diagnostics: LoadDiagnostic[];
}

export function indexRecords(read: ReadResult): RecordIndex {
  const entries = read.records.map(({ line, record }) => indexEntryOf(line, record));
  return { sessionId: read.sessionId, entries, diagnostics: [...read.diagnostics] };
}

const NO_IDS: readonly string[] = Object.freeze([]);

/** The index entry of one (merged) record read at `position`. */
export function indexEntryOf(position: number, record: ChatRecord): RecordIndexEntry {
  const parts = record.type === 'system' ? [] : record.message.parts;
  const callIds: string[] = [];
  const resultIds: string[] = [];
  for (const p of parts) {
    if (p.functionCall) callIds.push(p.functionCall.id ?? '');
    if (p.functionResponse) resultIds.push(p.functionResponse.id ?? '');
  }
  const entry: RecordIndexEntry = {
    position,
    uuid: record.uuid,
    parentUuid: record.parentUuid,
    type: record.type,
    // Most records hold no calls or no results: one shared frozen array instead of two per record.
    callIds: callIds.length === 0 ? NO_IDS : callIds,
    resultIds: resultIds.length === 0 ? NO_IDS : resultIds,
    mend: isMendVersion(record.version),
  };
  if (record.subtype !== undefined) entry.subtype = record.subtype;
  return entry;
}
