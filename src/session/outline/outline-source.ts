/**
 * A session's outline as the loader and the planner read it: over the
 * columns of an outline pass (outlineSource), or over a full read for a store that keeps
 * no byte ranges (wholeOutline). Records by index; parts as the plan rules see them;
 * whole records read back on demand.
 */
import type { ReadRecord } from '../conversation.js';
import { readRecordSource, type RecordSource } from '../conversation-loader.js';
import type { ReadResult } from '../log-reader.js';
import { keepsModelEntry } from '../model-entry.js';
import type { OutlineColumns } from './outline-columns.js';
import { indexRecords, type RecordIndexEntry } from './record-index.js';
import type { PartsShape } from '../parts-shape.js';
import type { ChatRecord, Part } from '../records.js';
import type { SessionOutline } from './session-outline.js';
import { indexInSorted } from '../sorted-index.js';
import { uuidToWords, type UuidTable } from './uuid-words.js';

/**
 * The outline over columns. `records` are the kept indices of the session's records;
 * `merged` holds the whole merged record of a fragmented uuid at its first line's index.
 */
export function outlineSource(
  kept: OutlineColumns,
  records: Int32Array,
  merged: ReadonlyMap<number, ReadRecord>,
  fullRecords: (kept: readonly number[]) => ChatRecord[],
  read: Omit<ReadResult, 'records'>,
): SessionOutline {
  let table: UuidTable | null = null;
  const isMerged = new Uint8Array(kept.length);
  for (const k of merged.keys()) isMerged[k] = 1;
  // Merged records answer from the record itself, through the full read's own source.
  const mergedAt = (k: number): ReadRecord => merged.get(k)!;
  const one = (k: number): RecordSource => readRecordSource([mergedAt(k)]);
  /** The session record at kept line k, or -1 (records are in line order). */
  const recordAt = (k: number): number => indexInSorted(records, k);
  const source: RecordSource = {
    count: records.length,
    uuid: (i) => kept.uuid(records[i]!),
    parentUuid: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? mergedAt(k).record.parentUuid : kept.parentUuid(k);
    },
    isParent: (i, j) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? mergedAt(k).record.parentUuid === kept.uuid(records[j]!) : kept.isParent(k, records[j]!);
    },
    find: (uuid) => {
      // Built on the first jump in the chain only (ordinary logs have none): 8 MB at 1M records.
      if (table === null) {
        table = kept.uuidTable(records.length);
        for (let i = 0; i < records.length; i++) table.findOrAdd(records[i]!);
      }
      const k = table.find(uuid);
      return k < 0 ? -1 : recordAt(k);
    },
    lastLine: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? one(k).lastLine(0) : kept.lineNos[k]!;
    },
    uuidWords: (i, out) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? uuidToWords(mergedAt(k).record.uuid, out, 0) : kept.uuidWordsOf(k, out);
    },
    firstLine: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? mergedAt(k).line : kept.lineNos[k]!;
    },
    type: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? mergedAt(k).record.type : kept.type(k);
    },
    isCompression: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? one(k).isCompression(0) : kept.isCompression(k);
    },
    isSidechain: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? one(k).isSidechain(0) : kept.isSidechain(k);
    },
    isModel: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? one(k).isModel(0) : kept.isModel(k);
    },
    provenance: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? one(k).provenance(0) : (kept.provenance[k] as 0 | 1 | 2);
    },
    full: (indices) => {
      // Lines are read back in one pass through the file; merged records are at hand.
      const ks = indices.map((i) => records[i]!);
      const lines = fullRecords(ks.filter((k) => isMerged[k] === 0));
      let next = 0;
      return ks.map((k) => (isMerged[k] === 1 ? mergedAt(k).record : lines[next++]!));
    },
  };
  return {
    read,
    source,
    outlineParts: (i) => {
      const k = records[i]!;
      if (isMerged[k] === 1) {
        const r = mergedAt(k).record;
        return r.type === 'system' ? null : r.message.parts;
      }
      return kept.outlineParts(k);
    },
    partsShape: (i) => {
      const k = records[i]!;
      return isMerged[k] === 1 ? undefined : (kept.partsShape(k) ?? undefined);
    },
    partCount: (i) => {
      const k = records[i]!;
      if (isMerged[k] === 1) {
        const r = mergedAt(k).record;
        return r.type === 'system' ? 0 : r.message.parts.length;
      }
      return kept.partCount(k);
    },
    keepsModelEntry: (i) => {
      const k = records[i]!;
      if (isMerged[k] === 1) {
        const r = mergedAt(k).record;
        return r.type === 'assistant' && keepsModelEntry(r.message.parts);
      }
      return kept.keepsModelEntry(k);
    },
    cwd: (i) => {
      const k = records[i]!;
      if (isMerged[k] === 1) {
        const cwd = mergedAt(k).record.cwd;
        return typeof cwd === 'string' ? cwd : undefined;
      }
      if (!kept.hasCwd(k)) return undefined;
      const cwd = fullRecords([k])[0]!.cwd;
      return typeof cwd === 'string' ? cwd : undefined;
    },
    indexEntries: () => {
      const entries: RecordIndexEntry[] = [];
      const withSubtype: number[] = [];
      for (let i = 0; i < records.length; i++) if (isMerged[records[i]!] === 0 && kept.hasSubtype(records[i]!)) withSubtype.push(records[i]!);
      const subtypes = new Map<number, string>();
      fullRecords(withSubtype).forEach((r, n) => subtypes.set(withSubtype[n]!, r.subtype!));
      for (let i = 0; i < records.length; i++) {
        const k = records[i]!;
        if (isMerged[k] === 1) {
          entries.push(indexRecords({ ...read, records: [mergedAt(k)] }).entries[0]!);
          continue;
        }
        const { callIds, resultIds } = kept.callAndResultIds(k);
        const entry: RecordIndexEntry = {
          position: kept.lineNos[k]!,
          uuid: kept.uuid(k),
          parentUuid: kept.parentUuid(k),
          type: kept.type(k),
          callIds: callIds.length === 0 ? NO_IDS : callIds,
          resultIds: resultIds.length === 0 ? NO_IDS : resultIds,
          mend: kept.provenance[k] === 1,
        };
        const subtype = subtypes.get(k);
        if (subtype !== undefined) entry.subtype = subtype;
        entries.push(entry);
      }
      return entries;
    },
  };
}

const NO_IDS: readonly string[] = Object.freeze([]);

/** The outline of a full read (a store that keeps no byte ranges): the records themselves. */
export function wholeOutline(read: ReadResult): SessionOutline {
  const { records, ...rest } = read;
  return {
    read: rest,
    source: readRecordSource(records),
    outlineParts: (i) => {
      const r = records[i]!.record;
      return r.type === 'system' ? null : r.message.parts;
    },
    cwd: (i) => {
      const cwd = records[i]!.record.cwd;
      return typeof cwd === 'string' ? cwd : undefined;
    },
    partCount: (i) => {
      const r = records[i]!.record;
      return r.type === 'system' ? 0 : r.message.parts.length;
    },
    keepsModelEntry: (i) => {
      const r = records[i]!.record;
      return r.type === 'assistant' && keepsModelEntry(r.message.parts);
    },
    indexEntries: () => indexRecords(read).entries,
    whole: read,
  };
}
