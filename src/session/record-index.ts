/**
 * The index pass of a session: per record only what the plan rules need (chain
 * links, type, call and result ids), not the records themselves. Stores serve it
 * through SessionStore.readIndex; today it is derived from a full read, and a
 * store may produce it without keeping full records (see the performance notes).
 */
import type { LoadDiagnostic } from './conversation.js';
import type { ReadResult } from './log-reader.js';
import { isMendVersion, type RecordType } from './records.js';

export interface RecordIndexEntry {
  /** 1-based line (JSONL) or sequence number (database) of the record's first piece. */
  position: number;
  uuid: string;
  parentUuid: string | null;
  type: RecordType;
  subtype?: string;
  /** Ids of the function calls the record holds (empty ids as ''). */
  callIds: string[];
  /** Ids of the function responses the record holds. */
  resultIds: string[];
  /** Written by mend (version `mend/...`). */
  mend: boolean;
}

export interface RecordIndex {
  sessionId: string | null;
  entries: RecordIndexEntry[];
  diagnostics: LoadDiagnostic[];
}

export function indexRecords(read: ReadResult): RecordIndex {
  const entries: RecordIndexEntry[] = read.records.map(({ line, record }) => {
    const parts = record.type === 'system' ? [] : record.message.parts;
    const entry: RecordIndexEntry = {
      position: line,
      uuid: record.uuid,
      parentUuid: record.parentUuid,
      type: record.type,
      callIds: parts.filter((p) => p.functionCall).map((p) => p.functionCall!.id ?? ''),
      resultIds: parts.filter((p) => p.functionResponse).map((p) => p.functionResponse!.id ?? ''),
      mend: isMendVersion(record.version),
    };
    if (record.subtype !== undefined) entry.subtype = record.subtype;
    return entry;
  });
  return { sessionId: read.sessionId, entries, diagnostics: [...read.diagnostics] };
}
