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

  const walk = walkChain(leaf, read, diagnostics, historyGaps);
  const activeEnd = walk.checkpoint >= 0 ? walk.checkpoint : walk.chain.length;
  const records = walk.chain.slice(0, activeEnd).reverse();
  // The checkpoint itself belongs to the active chain for provenance: it was written by someone too.
  const provenanceChain = walk.chain.slice(0, walk.checkpoint >= 0 ? walk.checkpoint + 1 : walk.chain.length);

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
 * Walks parent links from the leaf. A visited set bounds the walk, so a cycle
 * ends it instead of hanging. The walk goes on past the checkpoint (it is one
 * map lookup per record) so damage further back is still reported.
 */
function walkChain(leaf: ChatRecord, read: ReadResult, diagnostics: LoadDiagnostic[], gaps: HistoryGap[]): Walk {
  const byUuid = new Map<string, ChatRecord>();
  for (const { record } of read.records) byUuid.set(record.uuid, record);

  const chain: ChatRecord[] = [];
  const visited = new Set<string>();
  let checkpoint = -1;
  let compressedHistory: Content[] | null = null;
  let current: ChatRecord | undefined = leaf;

  while (current !== undefined) {
    if (visited.has(current.uuid)) {
      diagnostics.push({ code: 'parent_cycle', uuid: current.uuid, beforeCheckpoint: checkpoint >= 0 });
      break;
    }
    visited.add(current.uuid);
    chain.push(current);

    if (checkpoint < 0 && current.type === 'system' && current.subtype === SystemSubtype.chatCompression) {
      const payload = ChatCompressionPayloadSchema.safeParse(current.systemPayload);
      if (payload.success) {
        checkpoint = chain.length - 1;
        compressedHistory = payload.data.compressedHistory;
      } else {
        diagnostics.push(invalidPayload(current, payload.error));
      }
    }

    const parentUuid: string | null = current.parentUuid;
    if (parentUuid === null) break;
    const parent = byUuid.get(parentUuid);
    if (parent === undefined) {
      // A gap at the checkpoint itself lies behind it too: that history is replaced.
      gaps.push({ childUuid: current.uuid, missingParentUuid: parentUuid, beforeCheckpoint: checkpoint >= 0 });
      break;
    }
    current = parent;
  }
  return { chain, checkpoint, compressedHistory };
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
