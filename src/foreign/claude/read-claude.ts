/**
 * Claude Code transcript -> mend records, keeping Claude's uuids, parent links,
 * tool_use ids and tool names.
 *
 * - Rows of one API message (same `message.id`), each chained to the one before,
 *   become one model record: the first row's uuid, the later rows' parts as fragments
 *   of it (mend's reader merges them), their uuids aliased to it.
 * - Results of parallel calls that Claude chained as siblings (each under its call's
 *   row) are chained one after another, so each stays on the active chain.
 * - `isMeta` rows are not the user's words: Claude's own "Continue from where you left
 *   off." is an earlier recovery attempt (a `recovery` record); others are `foreign_meta`.
 * - Assistant rows of model `<synthetic>` are Claude's inventions ("No response
 *   requested."): `foreign_meta`, or `turn_failed` for an API error it recorded.
 * - "[Request interrupted by user]" is Claude's abort marker: `turn_aborted`.
 * - Other rows with a uuid stay on the chain as `foreign_row`; rows without one are counted.
 */
import type { LoadDiagnostic } from '../../session/conversation.js';
import type { ChatRecord, Part } from '../../session/records.js';
import type { ForeignAdapter, ForeignRowSource, ForeignSession } from '../adapter.js';
import { countRow, headObjects, scanJsonLines } from '../foreign-lines.js';
import { ForeignSubtype, modelRecord, ownerRecoveryRecord, responseOf, resultRecord, systemRecord, userRecord, type Base } from '../foreign-records.js';
import {
  CLAUDE_CONTINUE_TEXT,
  CLAUDE_INTERRUPT_TEXTS,
  CLAUDE_ROW_TYPES,
  CLAUDE_SYNTHETIC_MODEL,
  ClaudeChainRowSchema,
  ClaudeMessageRowSchema,
  ClaudeTextBlockSchema,
  ClaudeThinkingBlockSchema,
  ClaudeToolResultBlockSchema,
  ClaudeToolUseBlockSchema,
  type ClaudeBlock,
  type ClaudeMessageRow,
} from './claude-rows.js';

/** Rows only Claude writes; a `user`/`assistant` row counts when its message has `content` (mend's has `parts`). */
function looksLikeClaude(row: Record<string, unknown>): boolean {
  const type = row['type'];
  if (typeof type !== 'string') return false;
  if (type === 'user' || type === 'assistant') {
    const message = row['message'];
    return typeof message === 'object' && message !== null && 'content' in message && !('parts' in message);
  }
  if (type === 'summary') return typeof row['leafUuid'] === 'string';
  return CLAUDE_ROW_TYPES.has(type) && type !== 'system' && (typeof row['sessionId'] === 'string' || typeof row['messageId'] === 'string');
}

export const claudeAdapter: ForeignAdapter = {
  agent: 'claude',
  sniff: (head) => headObjects(head).some(looksLikeClaude),
  read: readClaude,
};

interface Run {
  uuid: string;
  lastRowUuid: string;
  messageId: string;
  index: number;
}

export function readClaude(bytes: Buffer): ForeignSession {
  const scanned = scanJsonLines(bytes);
  const diagnostics: LoadDiagnostic[] = [...scanned.diagnostics];
  const rowTypes: Record<string, number> = {};
  const unknown = new Map<string, { line: number; count: number }>();
  const records: ChatRecord[] = [];
  const sources: ForeignRowSource[] = [];
  const sessionCounts = new Map<string, number>();
  /** uuid of a row merged into an earlier record -> that record's uuid. */
  const alias = new Map<string, string>();
  const callNames = new Map<string, string>();
  /** parent uuid -> the last tool_result record chained under it. */
  const lastResultUnder = new Map<string, string>();
  let run: Run | null = null;
  let version: string | null = null;
  let cwd: string | null = null;

  for (const row of scanned.rows) {
    const sid = row.value['sessionId'];
    if (typeof sid === 'string' && sid.length > 0) sessionCounts.set(sid, (sessionCounts.get(sid) ?? 0) + 1);
  }
  const sessionId = majority(sessionCounts);

  const push = (record: ChatRecord, line: number): void => {
    records.push(record);
    sources.push({ lines: [line] });
  };

  for (const { line, value } of scanned.rows) {
    const type = typeof value['type'] === 'string' ? value['type'] : '(none)';
    countRow(rowTypes, type);
    if (!CLAUDE_ROW_TYPES.has(type)) {
      const seen = unknown.get(type);
      if (seen) seen.count++;
      else unknown.set(type, { line, count: 1 });
    }
    if (typeof value['uuid'] !== 'string') continue; // bookkeeping rows: counted only

    const chain = ClaudeChainRowSchema.safeParse(value);
    if (!chain.success) {
      diagnostics.push({ code: 'foreign_row_skipped', line, rowType: type, reason: 'a chain row without a valid uuid/parentUuid' });
      continue;
    }
    const row = chain.data;
    if (row.version) version = row.version;
    if (row.cwd && row.isSidechain !== true) cwd = row.cwd;
    const parent = row.parentUuid ? (alias.get(row.parentUuid) ?? row.parentUuid) : null;
    const b: Base = {
      uuid: row.uuid,
      parentUuid: parent,
      sessionId: row.sessionId ?? sessionId ?? '',
      timestamp: row.timestamp ?? '',
      version: row.version ?? 'claude',
      cwd: row.cwd,
      isSidechain: row.isSidechain,
    };

    if (type !== 'user' && type !== 'assistant') {
      run = null;
      push(
        systemRecord(b, ForeignSubtype.row, { agent: 'claude', rowType: type, ...(typeof value['subtype'] === 'string' ? { subtype: value['subtype'] } : {}) }),
        line,
      );
      continue;
    }
    const message = ClaudeMessageRowSchema.safeParse(value);
    if (!message.success) {
      run = null;
      diagnostics.push({ code: 'invalid_record', line, reason: `a Claude ${type} row without a readable message` });
      // Still on the chain: a child naming it must not look like a gap.
      push(systemRecord(b, ForeignSubtype.row, { agent: 'claude', rowType: type, unreadable: true }), line);
      continue;
    }
    const m = message.data;
    if (type === 'assistant') {
      const messageId = m.message.id;
      // A later row of the same API message, chained to the previous one: a fragment of its record.
      if (run && messageId && messageId === run.messageId && parent === run.uuid && m.message.model !== CLAUDE_SYNTHETIC_MODEL) {
        alias.set(row.uuid, run.uuid);
        const parts = modelParts(m, callNames);
        const first = records[run.index]!;
        records.push(modelRecord({ ...b, uuid: run.uuid, parentUuid: first.parentUuid }, parts, m.message.model));
        sources.push({ lines: [line] });
        sources[run.index]!.lines.push(line);
        run.lastRowUuid = row.uuid;
        continue;
      }
      run = null;
      if (m.message.model === CLAUDE_SYNTHETIC_MODEL) {
        const text = textOf(m.message.content);
        push(
          m.isApiErrorMessage
            ? systemRecord(b, 'turn_failed', { code: 'provider_error', message: text, agent: 'claude' })
            : systemRecord(b, ForeignSubtype.meta, { agent: 'claude', synthetic: true, text }),
          line,
        );
        continue;
      }
      if (messageId) run = { uuid: row.uuid, lastRowUuid: row.uuid, messageId, index: records.length };
      push(modelRecord(b, modelParts(m, callNames), m.message.model), line);
      continue;
    }

    run = null;
    const text = textOf(m.message.content);
    if (m.isMeta === true) {
      push(
        text.trim() === CLAUDE_CONTINUE_TEXT
          ? ownerRecoveryRecord(b, 'claude', 'Claude Code resumed the session with "Continue from where you left off."')
          : systemRecord(b, ForeignSubtype.meta, { agent: 'claude', text: text.slice(0, 200) }),
        line,
      );
      continue;
    }
    if (CLAUDE_INTERRUPT_TEXTS.has(text.trim())) {
      push(systemRecord(b, 'turn_aborted', { reason: 'sigint', agent: 'claude' }), line);
      continue;
    }
    const { parts, results } = userParts(m.message.content, callNames);
    if (results > 0) {
      // Results of parallel calls chained as siblings: one after another, so each stays on the chain.
      if (parent !== null) {
        const previous = lastResultUnder.get(parent);
        if (previous !== undefined) b.parentUuid = previous;
        lastResultUnder.set(parent, row.uuid);
      }
      push(resultRecord(b, parts), line);
    } else {
      push(userRecord(b, parts), line);
    }
  }

  for (const [rowType, { line, count }] of unknown) diagnostics.push({ code: 'unknown_row_type', line, rowType, count });
  return {
    agent: 'claude',
    agentVersion: version,
    sessionId,
    cwd,
    records,
    rowsBySource: sources,
    diagnostics,
    rowTypes,
    lines: scanned.lines,
    bytes: scanned.bytes,
    endsWithNewline: scanned.endsWithNewline,
  };
}

function majority(counts: Map<string, number>): string | null {
  let best: string | null = null;
  let n = 0;
  for (const [id, c] of counts) if (c > n) [best, n] = [id, c];
  return best;
}

function textOf(content: string | ClaudeBlock[]): string {
  if (typeof content === 'string') return content;
  return content
    .map((b) => ClaudeTextBlockSchema.safeParse(b))
    .filter((r) => r.success)
    .map((r) => r.data.text)
    .join('\n');
}

/** A model row's blocks as parts: text, thinking as a thought part, tool_use as a call (Claude's id and name). */
function modelParts(m: ClaudeMessageRow, callNames: Map<string, string>): Part[] {
  const content = m.message.content;
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  const parts: Part[] = [];
  for (const block of content) {
    const text = ClaudeTextBlockSchema.safeParse(block);
    if (text.success) {
      parts.push({ text: text.data.text });
      continue;
    }
    const thinking = ClaudeThinkingBlockSchema.safeParse(block);
    if (thinking.success) {
      if (thinking.data.thinking) parts.push({ text: thinking.data.thinking, thought: true });
      continue;
    }
    const call = ClaudeToolUseBlockSchema.safeParse(block);
    if (call.success) {
      callNames.set(call.data.id, call.data.name);
      parts.push({ functionCall: { id: call.data.id, name: call.data.name, args: call.data.input ?? {} } });
    }
    // redacted_thinking, server tool blocks: nothing a continuation can send on another provider.
  }
  return parts;
}

function userParts(content: string | ClaudeBlock[], callNames: Map<string, string>): { parts: Part[]; results: number } {
  if (typeof content === 'string') return { parts: content ? [{ text: content }] : [], results: 0 };
  const results: Part[] = [];
  const rest: Part[] = [];
  for (const block of content) {
    const result = ClaudeToolResultBlockSchema.safeParse(block);
    if (result.success) {
      const r = result.data;
      const output = typeof r.content === 'string' ? r.content : r.content ? textOf(r.content) : '';
      results.push({
        functionResponse: { id: r.tool_use_id, name: callNames.get(r.tool_use_id) ?? 'unknown', response: responseOf(output, r.is_error === true) },
      });
      continue;
    }
    const text = ClaudeTextBlockSchema.safeParse(block);
    if (text.success) rest.push({ text: text.data.text });
    else if (block.type === 'image') rest.push({ text: '[image]' });
  }
  return { parts: [...results, ...rest], results: results.length };
}
