/**
 * Turns the records of one log into its active conversation. Pure: no file
 * system, no clock; everything it notices comes back as values.
 *
 * The active chain is the parentUuid chain walked back from the last record in
 * file order (system records included, as Qwen Code does). The latest valid
 * `chat_compression` on that chain is a checkpoint: its compressedHistory
 * replaces everything before it, so damage found only behind it (a gap or a
 * cycle) is reported with beforeCheckpoint=true and does not degrade the session.
 */
import type { z } from 'zod';
import {
  lastCwd,
  type ConversationRecord,
  type HistoryGap,
  type LoadDiagnostic,
  type LoadedSession,
  type ReadRecord,
  type TurnFailedMarker,
} from './conversation.js';
import type { ReadResult } from './log-reader.js';
import { isModelEntry } from './model-entry.js';
import {
  ChatCompressionPayloadSchema,
  RecoveryMarkerPayloadSchema,
  SystemSubtype,
  TurnAbortedPayloadSchema,
  TurnFailedPayloadSchema,
  isMendVersion,
  type ChatRecord,
  type Content,
  type RecordType,
  type SystemRecord,
} from './records.js';
import { isSidechainRecord } from './record-kinds.js';
import { summarizeIssues } from './record-validation.js';
import { indexInSorted } from './sorted-index.js';

export interface BuildOptions {
  /** Used when no record names the session (an empty or fully damaged log), e.g. the file name's id. */
  fallbackSessionId?: string;
}

/** An assistant record that is a model entry (see model-entry.ts): empty and thought-only ones are not. */
function isModelRecord(record: ChatRecord): boolean {
  return record.type === 'assistant' && isModelEntry(record.message.parts);
}

/**
 * What the loader reads of a session's records, by index (file order, fragments
 * merged): a full read (readRecordSource) or a store's outline, so both
 * are loaded by one algorithm. `full` gives whole records, asked for only where a
 * rule reads content: the tail from the last model entry on, and a checkpoint's payload.
 */
export interface RecordSource {
  /** Valid records of the session, sidechain ones included. */
  readonly count: number;
  uuid(i: number): string;
  parentUuid(i: number): string | null;
  /** parentUuid(i) === uuid(j), answered without making strings where the source can. */
  isParent(i: number, j: number): boolean;
  /** The index of the record with this uuid, or -1. */
  find(uuid: string): number;
  /** The line of the record's last piece (its own line when it has one piece). */
  lastLine(i: number): number;
  /** The line of the record's first piece. */
  firstLine(i: number): number;
  /**
   * Optional: record i's uuid as four 32-bit words in `out` (the outline wing's
   * uuidToWords) without making its string, where the source keeps it that way; false
   * when the uuid is not a canonical one (then `uuid(i)`).
   */
  uuidWords?(i: number, out: Uint32Array): boolean;
  type(i: number): RecordType;
  /** A `chat_compression` system record (its payload is read through `full`). */
  isCompression(i: number): boolean;
  isSidechain(i: number): boolean;
  /** An assistant record that is a model entry (model-entry.ts). */
  isModel(i: number): boolean;
  /** 0: no version; 1: written by mend; 2: another writer. */
  provenance(i: number): 0 | 1 | 2;
  /** Whole records, in the order asked. */
  full(indices: readonly number[]): ChatRecord[];
}

/** The records of a full read as a RecordSource. */
export function readRecordSource(records: readonly ReadRecord[]): RecordSource {
  let byUuid: Map<string, number> | null = null;
  return {
    count: records.length,
    uuid: (i) => records[i]!.record.uuid,
    parentUuid: (i) => records[i]!.record.parentUuid,
    isParent: (i, j) => records[i]!.record.parentUuid === records[j]!.record.uuid,
    find: (uuid) => {
      if (byUuid === null) {
        byUuid = new Map();
        // A uuid on several records (only in hand-built inputs: the reader merges them) finds the last.
        for (let i = 0; i < records.length; i++) byUuid.set(records[i]!.record.uuid, i);
      }
      return byUuid.get(uuid) ?? -1;
    },
    lastLine: (i) => records[i]!.lastLine ?? records[i]!.line,
    firstLine: (i) => records[i]!.line,
    type: (i) => records[i]!.record.type,
    isCompression: (i) => {
      const r = records[i]!.record;
      return r.type === 'system' && r.subtype === SystemSubtype.chatCompression;
    },
    isSidechain: (i) => isSidechainRecord(records[i]!.record),
    isModel: (i) => isModelRecord(records[i]!.record),
    provenance: (i) => {
      const v = records[i]!.record.version;
      return v === undefined ? 0 : isMendVersion(v) ? 1 : 2;
    },
    full: (indices) => indices.map((i) => records[i]!.record),
  };
}

/** A conversation with the source indices of its records, and where its tail starts. */
export interface LoadedChain {
  /** `conversation.records` holds the full records of chain[tailStart...] only; the caller fills in the rest. */
  loaded: LoadedSession;
  /** Source indices of the active chain, oldest first (what conversation.records holds). */
  chain: Int32Array;
  /** Index in `chain` where the tail starts (the last model entry by default), or 0 when there is none: from here on records were read whole. */
  tailStart: number;
  /** The full records of chain[tailStart...]. */
  tail: ChatRecord[];
}

export function buildConversation(read: ReadResult, options: BuildOptions = {}): LoadedSession {
  const built = buildConversationFrom(readRecordSource(read.records), read, options);
  const conversation = built.loaded.conversation;
  conversation.records = Array.from(built.chain, (i) => read.records[i]!.record);
  conversation.recordedCwd = lastCwd(conversation.records);
  return built.loaded;
}

/** The loader over any RecordSource: everything but the records before the tail, which the caller provides. */
export function buildConversationFrom(
  source: RecordSource,
  read: Pick<ReadResult, 'diagnostics' | 'sessionId'>,
  options: BuildOptions = {},
  /**
   * Where the tail (read whole) starts: the last chain record this holds for, the last
   * model entry by default. Only model entries may qualify: the markers after the last
   * model entry are read from the tail.
   */
  tailFrom: (i: number) => boolean = (i) => source.isModel(i),
): LoadedChain {
  const diagnostics: LoadDiagnostic[] = [...read.diagnostics];
  const historyGaps: HistoryGap[] = [];
  const sessionId = read.sessionId ?? options.fallbackSessionId ?? '';

  // Subagent transcripts are not the main history: set aside before anything else,
  // so neither the leaf, the chain nor the tail can be one of theirs.
  // Index arrays, not number[]: at 1M records each array of numbers was 8 MB more.
  let mainCount = 0;
  const mainAll = new Int32Array(source.count);
  let sidechainRecords = 0;
  for (let i = 0; i < source.count; i++) {
    if (source.isSidechain(i)) sidechainRecords++;
    else mainAll[mainCount++] = i;
  }
  const main = mainAll.subarray(0, mainCount);

  // The leaf is the record of the last record line in the file, also when that line is
  // a late fragment of an earlier record (as Qwen Code picks it).
  let leafIndex = -1;
  for (let k = 0, last = -1; k < main.length; k++) {
    const at = source.lastLine(main[k]!);
    if (at > last) {
      last = at;
      leafIndex = k;
    }
  }

  if (leafIndex < 0) {
    const conversation = emptyConversation(sessionId);
    conversation.sidechainRecords = sidechainRecords;
    return { loaded: { conversation, historyGaps, diagnostics }, chain: new Int32Array(0), tailStart: 0, tail: [] };
  }

  const walk = walkChain(source, main, leafIndex, diagnostics, historyGaps);
  const activeEnd = walk.checkpoint >= 0 ? walk.checkpoint : walk.chain.length;
  // Reversed in place: the walk's own array (newest first) is not needed after this but for provenance, read first.
  const provenanceTop = walk.checkpoint >= 0 ? walk.checkpoint + 1 : walk.chain.length;
  // writtenByMend is about the interrupted tail only: from the last assistant record on
  // (or the whole active chain, checkpoint included, when there is none). Older history
  // may well be a peer's (a Qwen session continued in mend) and says nothing about how
  // this tail ended.
  const lastModelNewest = walk.chain.subarray(0, activeEnd).findIndex((i) => source.isModel(i));
  const writtenByMend = isWrittenByMend(source, lastModelNewest >= 0 ? walk.chain.subarray(0, lastModelNewest + 1) : walk.chain.subarray(0, provenanceTop));
  const chain = walk.chain.subarray(0, activeEnd).reverse();
  const tailStart = Math.max(0, chain.findLastIndex(tailFrom));
  const tail = source.full(Array.from(chain.subarray(tailStart)));

  const conversation: ConversationRecord = {
    sessionId,
    leafUuid: source.uuid(main[leafIndex]!),
    records: tail,
    compressedHistory: walk.compressedHistory,
    totalRecords: source.count,
    writtenByMend,
    // The markers after the last model entry lie in the tail: the tail is all they read.
    afterLastModel: markersAfterLastModel(tail, diagnostics),
    sidechainRecords,
    // The tail's: the caller that fills in the records before it sets the chain's.
    recordedCwd: lastCwd(tail),
  };
  return { loaded: { conversation, historyGaps, diagnostics }, chain, tailStart, tail };
}

function emptyConversation(sessionId: string): ConversationRecord {
  return {
    sessionId,
    leafUuid: null,
    records: [],
    compressedHistory: null,
    totalRecords: 0,
    writtenByMend: false,
    afterLastModel: { turnAborted: [], recoveryRecords: [], turnFailed: [], endedBy: null },
    sidechainRecords: 0,
    recordedCwd: null,
  };
}

interface Walk {
  /** Source indices of the chain, newest first. */
  chain: Int32Array;
  /** Index in `chain` of the checkpoint, or -1. */
  checkpoint: number;
  compressedHistory: Content[] | null;
}

/**
 * Walks parent links from the leaf. In an ordinary log a record's parent is the
 * record just before it, so that is tried first and the uuid map is only built
 * when the chain jumps (branches, interleaved writers). A cycle cannot make the
 * walk longer than the number of records without repeating one, so cycles are
 * detected by counting steps; only then is the walk redone with a visited set
 * to name the record where it closes. The walk goes on past the checkpoint so
 * damage further back is still reported.
 */
function walkChain(source: RecordSource, main: Int32Array, leafIndex: number, diagnostics: LoadDiagnostic[], gaps: HistoryGap[]): Walk {
  const walk = walkOnce(source, main, leafIndex, false) ?? walkOnce(source, main, leafIndex, true)!;
  diagnostics.push(...walk.diagnostics);
  if (walk.gap) gaps.push(walk.gap);
  return walk;
}

interface WalkResult extends Walk {
  diagnostics: LoadDiagnostic[];
  gap: HistoryGap | null;
}

/** Null when, without a visited set, the walk ran longer than a cycle-free chain can be. `k` indexes `main`. */
function walkOnce(source: RecordSource, main: Int32Array, leafIndex: number, trackVisited: boolean): WalkResult | null {
  /** Position in `main` of source index i, or -1 (a sidechain record is not in it; main is in index order). */
  const inMain = (i: number): number => indexInSorted(main, i);

  // A chain is never longer than main (a longer walk is a cycle, found below).
  const steps = new Int32Array(main.length);
  let length = 0;
  const result: WalkResult = { chain: steps, checkpoint: -1, compressedHistory: null, diagnostics: [], gap: null };
  const visited = trackVisited ? new Set<string>() : null;
  let k = leafIndex;

  while (k >= 0) {
    const index = main[k]!;
    if (visited?.has(source.uuid(index))) {
      result.diagnostics.push({ code: 'parent_cycle', uuid: source.uuid(index), beforeCheckpoint: result.checkpoint >= 0 });
      break;
    }
    if (visited === null && length >= main.length) return null;
    visited?.add(source.uuid(index));
    steps[length++] = index;

    if (result.checkpoint < 0 && source.isCompression(index)) {
      const current = source.full([index])[0] as SystemRecord;
      const payload = ChatCompressionPayloadSchema.safeParse(current.systemPayload);
      if (payload.success) {
        result.checkpoint = length - 1;
        result.compressedHistory = payload.data.compressedHistory;
      } else {
        result.diagnostics.push(invalidPayload(current, payload.error));
      }
    }

    // In an ordinary log the parent is the record just before; only a jump looks the uuid up.
    if (k > 0 && source.isParent(index, main[k - 1]!)) {
      k--;
      continue;
    }
    const parentUuid = source.parentUuid(index);
    if (parentUuid === null) break;
    const found = source.find(parentUuid);
    const parent = found < 0 ? -1 : inMain(found);
    if (parent < 0) {
      // A gap at the checkpoint itself lies behind it too: that history is replaced.
      result.gap = { childUuid: source.uuid(index), missingParentUuid: parentUuid, beforeCheckpoint: result.checkpoint >= 0 };
      break;
    }
    k = parent;
  }
  result.chain = steps.subarray(0, length);
  return result;
}

function isWrittenByMend(source: RecordSource, chain: Int32Array): boolean {
  let seen = false;
  for (const i of chain) {
    const provenance = source.provenance(i);
    if (provenance === 0) continue;
    if (provenance === 2) return false;
    seen = true;
  }
  return seen;
}

/**
 * `turn_aborted`, `turn_failed` and `recovery` markers after the last model entry of
 * the active chain (all of them when it has none). An assistant record that is no
 * model entry (no parts, empty parts, thoughts only) does not reset them: nothing of
 * it reaches the provider, so the turn it belongs to is still the interrupted one.
 *
 * A `recovery` record counts whatever repair types it lists (a newer mend may know
 * more): only its shape is checked, and one whose payload fails even that still
 * counts (an attempt was made) and is reported. Abort and failure markers with a
 * payload that does not validate are reported and otherwise ignored.
 */
function markersAfterLastModel(records: ChatRecord[], diagnostics: LoadDiagnostic[]): ConversationRecord['afterLastModel'] {
  const turnAborted: ConversationRecord['afterLastModel']['turnAborted'] = [];
  const turnFailed: TurnFailedMarker[] = [];
  const recoveryRecords: SystemRecord[] = [];
  let endedBy: ConversationRecord['afterLastModel']['endedBy'] = null;
  let start = 0;
  for (let i = records.length - 1; i >= 0; i--) {
    if (isModelRecord(records[i]!)) {
      start = i + 1;
      break;
    }
  }
  for (let i = start; i < records.length; i++) {
    const record = records[i]!;
    if (record.type !== 'system') {
      // A new prompt after a marker: the tail went on, the marker no longer ends it. (A
      // result recorded after it is a late write of the stopped turn itself: it still ends it.)
      if (record.type === 'user' && record.message.parts.length > 0) endedBy = null;
      continue;
    }
    if (record.subtype === SystemSubtype.turnAborted) {
      const payload = TurnAbortedPayloadSchema.safeParse(record.systemPayload);
      if (payload.success) {
        turnAborted.push({ uuid: record.uuid, reason: payload.data.reason });
        endedBy = { subtype: 'turn_aborted', uuid: record.uuid };
      } else diagnostics.push(invalidPayload(record, payload.error));
    } else if (record.subtype === SystemSubtype.turnFailed) {
      const payload = TurnFailedPayloadSchema.safeParse(record.systemPayload);
      if (payload.success) {
        turnFailed.push({ uuid: record.uuid, code: payload.data.code, message: payload.data.message });
        endedBy = { subtype: 'turn_failed', uuid: record.uuid };
      } else diagnostics.push(invalidPayload(record, payload.error));
    } else if (record.subtype === SystemSubtype.recovery) {
      const payload = RecoveryMarkerPayloadSchema.safeParse(record.systemPayload);
      if (!payload.success) diagnostics.push(invalidPayload(record, payload.error));
      recoveryRecords.push(record);
      // A recovery attempt after the marker: whatever stopped it, the marker's stop was handled.
      endedBy = null;
    }
  }
  return { turnAborted, recoveryRecords, turnFailed, endedBy };
}

function invalidPayload(record: SystemRecord, error: z.ZodError): LoadDiagnostic {
  return { code: 'invalid_system_payload', uuid: record.uuid, subtype: record.subtype, reason: summarizeIssues(error) };
}
