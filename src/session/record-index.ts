/**
 * The index pass of a session: per record only what the plan rules need (chain
 * links, type, call and result ids), not the records themselves. Stores serve it
 * through SessionStore.readIndex: the JSONL store from its outline pass
 * (outline-reader.ts, no full records kept), the PostgreSQL store from a full read.
 */
import type { ReadResult, RecordIndex, RecordIndexEntry } from '../store/session-reads.js';
import { isMendVersion, type ChatRecord } from './records.js';

export type { RecordIndex, RecordIndexEntry } from '../store/session-reads.js';

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
