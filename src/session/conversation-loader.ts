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
import type { ConversationRecord, HistoryGap, LoadDiagnostic, LoadedSession, ReadRecord, TurnFailedMarker } from './conversation.js';
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
  type SystemRecord,
} from './records.js';
import { summarizeIssues } from './record-validation.js';

export interface BuildOptions {
  /** Used when no record names the session (an empty or fully damaged log), e.g. the file name's id. */
  fallbackSessionId?: string;
}

interface Walk {
  /** Chain records, newest first. */
  chain: ChatRecord[];
  /** Index in `chain` of the checkpoint, or -1. */
  checkpoint: number;
  compressedHistory: Content[] | null;
}

/**
 * A subagent's transcript record. Claude Code keeps subagent transcripts in the main
 * file marked `isSidechain: true`; Qwen Code 0.24.4 writes them to a file of their own
 * (`subagents/<sessionId>/agent-<agentId>.jsonl`) with the same marker plus `agentId`,
 * so such a record copied into a session file carries at least one of the two. An
 * explicit `isSidechain: false` is the main history whatever else it carries.
 */
export function isSidechainRecord(record: ChatRecord): boolean {
  const marker = (record as { isSidechain?: unknown }).isSidechain;
  if (marker !== undefined) return marker === true;
  const agentId = (record as { agentId?: unknown }).agentId;
  return typeof agentId === 'string' && agentId.length > 0;
}

/** An assistant record that is a model entry (see model-entry.ts): empty and thought-only ones are not. */
function isModelRecord(record: ChatRecord): boolean {
  return record.type === 'assistant' && isModelEntry(record.message.parts);
}

export function buildConversation(read: ReadResult, options: BuildOptions = {}): LoadedSession {
  const diagnostics: LoadDiagnostic[] = [...read.diagnostics];
  const historyGaps: HistoryGap[] = [];
  const sessionId = read.sessionId ?? options.fallbackSessionId ?? '';

  // Subagent transcripts are not the main history: set aside before anything else,
  // so neither the leaf, the chain nor the tail can be one of theirs.
  let main = read.records;
  let sidechainRecords = 0;
  for (const r of read.records) if (isSidechainRecord(r.record)) sidechainRecords++;
  if (sidechainRecords > 0) main = read.records.filter((r) => !isSidechainRecord(r.record));

  // The leaf is the record of the last record line in the file, also when that line is
  // a late fragment of an earlier record (as Qwen Code picks it).
  let leafIndex = -1;
  for (let i = 0, last = -1; i < main.length; i++) {
    const at = main[i]!.lastLine ?? main[i]!.line;
    if (at > last) {
      last = at;
      leafIndex = i;
    }
  }
  const leaf = main[leafIndex]?.record;

  if (leaf === undefined) {
    const conversation = emptyConversation(sessionId);
    conversation.sidechainRecords = sidechainRecords;
    return { conversation, historyGaps, diagnostics };
  }

  const walk = walkChain(main, leafIndex, diagnostics, historyGaps);
  const activeEnd = walk.checkpoint >= 0 ? walk.checkpoint : walk.chain.length;
  const records = walk.chain.slice(0, activeEnd).reverse();
  // writtenByMend is about the interrupted tail only: from the last assistant record on
  // (or the whole active chain, checkpoint included, when there is none). Older history
  // may well be a peer's (a Qwen session continued in mend) and says nothing about how
  // this tail ended.
  const lastAssistant = records.findLastIndex(isModelRecord);
  const provenanceChain =
    lastAssistant >= 0 ? records.slice(lastAssistant) : walk.chain.slice(0, walk.checkpoint >= 0 ? walk.checkpoint + 1 : walk.chain.length);

  const conversation: ConversationRecord = {
    sessionId,
    leafUuid: leaf.uuid,
    records,
    compressedHistory: walk.compressedHistory,
    totalRecords: read.records.length,
    writtenByMend: isWrittenByMend(provenanceChain),
    afterLastModel: markersAfterLastModel(records, diagnostics),
    sidechainRecords,
  };
  return { conversation, historyGaps, diagnostics };
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
  };
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
function walkChain(all: readonly ReadRecord[], leafIndex: number, diagnostics: LoadDiagnostic[], gaps: HistoryGap[]): Walk {
  const walk = walkOnce(all, leafIndex, false) ?? walkOnce(all, leafIndex, true)!;
  diagnostics.push(...walk.diagnostics);
  if (walk.gap) gaps.push(walk.gap);
  return walk;
}

interface WalkResult extends Walk {
  diagnostics: LoadDiagnostic[];
  gap: HistoryGap | null;
}

/** Null when, without a visited set, the walk ran longer than a cycle-free chain can be. */
function walkOnce(all: readonly ReadRecord[], leafIndex: number, trackVisited: boolean): WalkResult | null {
  let byUuid: Map<string, number> | null = null;
  const indexOf = (uuid: string, hint: number): number => {
    if (hint >= 0 && all[hint]!.record.uuid === uuid) return hint;
    if (byUuid === null) {
      byUuid = new Map();
      for (let i = 0; i < all.length; i++) byUuid.set(all[i]!.record.uuid, i);
    }
    return byUuid.get(uuid) ?? -1;
  };

  const result: WalkResult = { chain: [], checkpoint: -1, compressedHistory: null, diagnostics: [], gap: null };
  const visited = trackVisited ? new Set<string>() : null;
  let index = leafIndex;

  while (index >= 0) {
    const current = all[index]!.record;
    if (visited?.has(current.uuid)) {
      result.diagnostics.push({ code: 'parent_cycle', uuid: current.uuid, beforeCheckpoint: result.checkpoint >= 0 });
      break;
    }
    if (visited === null && result.chain.length >= all.length) return null;
    visited?.add(current.uuid);
    result.chain.push(current);

    if (result.checkpoint < 0 && current.type === 'system' && current.subtype === SystemSubtype.chatCompression) {
      const payload = ChatCompressionPayloadSchema.safeParse(current.systemPayload);
      if (payload.success) {
        result.checkpoint = result.chain.length - 1;
        result.compressedHistory = payload.data.compressedHistory;
      } else {
        result.diagnostics.push(invalidPayload(current, payload.error));
      }
    }

    const parentUuid = current.parentUuid;
    if (parentUuid === null) break;
    const parentIndex = indexOf(parentUuid, index - 1);
    if (parentIndex < 0) {
      // A gap at the checkpoint itself lies behind it too: that history is replaced.
      result.gap = { childUuid: current.uuid, missingParentUuid: parentUuid, beforeCheckpoint: result.checkpoint >= 0 };
      break;
    }
    index = parentIndex;
  }
  return result;
}

function isWrittenByMend(chain: ChatRecord[]): boolean {
  let seen = false;
  for (const record of chain) {
    if (record.version === undefined) continue;
    if (!isMendVersion(record.version)) return false;
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
