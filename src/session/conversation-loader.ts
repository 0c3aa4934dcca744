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
import type { ConversationRecord, HistoryGap, LoadDiagnostic, LoadedSession } from './conversation.js';
import type { ReadResult } from './log-reader.js';
import {
  ChatCompressionPayloadSchema,
  RecoveryDebugPayloadSchema,
  SystemSubtype,
  TurnAbortedPayloadSchema,
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

export function buildConversation(read: ReadResult, options: BuildOptions = {}): LoadedSession {
  const diagnostics: LoadDiagnostic[] = [...read.diagnostics];
  const historyGaps: HistoryGap[] = [];
  const sessionId = read.sessionId ?? options.fallbackSessionId ?? '';
  const leaf = read.records.at(-1)?.record;

  if (leaf === undefined) {
    return {
      conversation: emptyConversation(sessionId),
      historyGaps,
      diagnostics,
    };
  }

  const walk = walkChain(read, diagnostics, historyGaps);
  const activeEnd = walk.checkpoint >= 0 ? walk.checkpoint : walk.chain.length;
  const records = walk.chain.slice(0, activeEnd).reverse();
  // writtenByMend is about the interrupted tail only: from the last assistant record on
  // (or the whole active chain, checkpoint included, when there is none). Older history
  // may well be a peer's (a Qwen session continued in mend) and says nothing about how
  // this tail ended.
  const lastAssistant = records.findLastIndex((r) => r.type === 'assistant');
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
    afterLastModel: { turnAborted: [], recoveryRecords: [] },
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
function walkChain(read: ReadResult, diagnostics: LoadDiagnostic[], gaps: HistoryGap[]): Walk {
  const walk = walkOnce(read, false) ?? walkOnce(read, true)!;
  diagnostics.push(...walk.diagnostics);
  if (walk.gap) gaps.push(walk.gap);
  return walk;
}

interface WalkResult extends Walk {
  diagnostics: LoadDiagnostic[];
  gap: HistoryGap | null;
}

/** Null when, without a visited set, the walk ran longer than a cycle-free chain can be. */
function walkOnce(read: ReadResult, trackVisited: boolean): WalkResult | null {
  const all = read.records;
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
  let index = all.length - 1;

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
 * `turn_aborted` and `recovery` markers after the last assistant record of the
 * active chain (all of them when it has none). Markers with a payload that does
 * not validate are reported and otherwise treated as ordinary system records.
 */
function markersAfterLastModel(records: ChatRecord[], diagnostics: LoadDiagnostic[]): ConversationRecord['afterLastModel'] {
  const turnAborted: ConversationRecord['afterLastModel']['turnAborted'] = [];
  const recoveryRecords: SystemRecord[] = [];
  let start = 0;
  for (let i = records.length - 1; i >= 0; i--) {
    if (records[i]!.type === 'assistant') {
      start = i + 1;
      break;
    }
  }
  for (let i = start; i < records.length; i++) {
    const record = records[i]!;
    if (record.type !== 'system') continue;
    if (record.subtype === SystemSubtype.turnAborted) {
      const payload = TurnAbortedPayloadSchema.safeParse(record.systemPayload);
      if (payload.success) turnAborted.push({ uuid: record.uuid, reason: payload.data.reason });
      else diagnostics.push(invalidPayload(record, payload.error));
    } else if (record.subtype === SystemSubtype.recovery) {
      const payload = RecoveryDebugPayloadSchema.safeParse(record.systemPayload);
      if (payload.success) recoveryRecords.push(record);
      else diagnostics.push(invalidPayload(record, payload.error));
    }
  }
  return { turnAborted, recoveryRecords };
}

function invalidPayload(record: SystemRecord, error: z.ZodError): LoadDiagnostic {
  return { code: 'invalid_system_payload', uuid: record.uuid, subtype: record.subtype, reason: summarizeIssues(error) };
}
