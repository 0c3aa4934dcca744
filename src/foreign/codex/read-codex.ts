/**
 * Codex rollout -> mend records. A rollout has no uuids and no parent links: it is
 * one history in file order, so each record gets a uuid naming its line
 * (`codex-L<line>`) and the record before it as parent. Call ids (`call_id`) and
 * tool names are Codex's own.
 *
 * - Model-side items written one after another (reasoning, message, calls) are one
 *   model record, as they were one response: the first item's record, the others
 *   fragments of it. Reasoning summaries are thought parts.
 * - `function_call_output` / `custom_tool_call_output` are results.
 * - `event_msg` `turn_aborted` (Ctrl-C) is mend's `turn_aborted`; so is the
 *   `<turn_aborted>` user message newer versions record.
 * - User messages Codex injects (environment context, AGENTS.md) and developer
 *   messages are `foreign_meta`: not the user's words.
 * - Other events, turn contexts, token records are counted only.
 */
import type { LoadDiagnostic } from '../../session/conversation.js';
import type { ChatRecord, Part } from '../../session/records.js';
import type { ForeignAdapter, ForeignRowSource, ForeignSession } from '../adapter.js';
import { countRow, headObjects, scanJsonLines } from '../foreign-lines.js';
import { ForeignSubtype, modelRecord, responseOf, resultRecord, systemRecord, userRecord, type Base } from '../foreign-records.js';
import {
  CODEX_ABORT_PREFIX,
  CODEX_INJECTED_PREFIXES,
  CODEX_LINE_TYPES,
  CODEX_OTHER_ITEMS,
  CodexCallOutputSchema,
  CodexCustomToolCallSchema,
  CodexFunctionCallSchema,
  CodexLineSchema,
  CodexLocalShellCallSchema,
  CodexMessageSchema,
  CodexReasoningSchema,
  CodexSessionMetaSchema,
  type CodexOutput,
} from './codex-rows.js';

function looksLikeCodex(row: Record<string, unknown>): boolean {
  const payload = row['payload'];
  return typeof row['type'] === 'string' && CODEX_LINE_TYPES.has(row['type']) && typeof payload === 'object' && payload !== null;
}

export const codexAdapter: ForeignAdapter = {
  agent: 'codex',
  sniff: (head) => headObjects(head).some(looksLikeCodex),
  read: readCodex,
};

export function readCodex(bytes: Buffer): ForeignSession {
  const scanned = scanJsonLines(bytes);
  const diagnostics: LoadDiagnostic[] = [...scanned.diagnostics];
  const rowTypes: Record<string, number> = {};
  const unknown = new Map<string, { line: number; count: number }>();
  const records: ChatRecord[] = [];
  const sources: ForeignRowSource[] = [];
  const callNames = new Map<string, string>();
  let sessionId: string | null = null;
  let version: string | null = null;
  let cwd: string | null = null;
  let leaf: string | null = null;
  /** The model record the next model-side item joins (items of one response), or null. */
  let response: { uuid: string; parentUuid: string | null; index: number } | null = null;
  const withOrdinal = scanned.rows.some((r) => typeof r.value['ordinal'] === 'number');

  const noteUnknown = (type: string, line: number): void => {
    const seen = unknown.get(type);
    if (seen) seen.count++;
    else unknown.set(type, { line, count: 1 });
  };
  const base = (line: number, timestamp: string | undefined): Base => ({
    uuid: `codex-L${line}`,
    parentUuid: leaf,
    sessionId: sessionId ?? '',
    timestamp: timestamp ?? '',
    version: version ?? 'codex',
    ...(cwd ? { cwd } : {}),
  });
  const push = (record: ChatRecord, line: number): void => {
    records.push(record);
    sources.push({ lines: [line] });
    leaf = record.uuid;
  };
  const pushModel = (line: number, timestamp: string | undefined, parts: Part[]): void => {
    if (response) {
      records.push(modelRecord({ ...base(line, timestamp), uuid: response.uuid, parentUuid: response.parentUuid }, parts));
      sources.push({ lines: [line] });
      sources[response.index]!.lines.push(line);
      return;
    }
    const b = base(line, timestamp);
    response = { uuid: b.uuid, parentUuid: b.parentUuid, index: records.length };
    push(modelRecord(b, parts), line);
  };

  for (const { line, value } of scanned.rows) {
    const parsed = CodexLineSchema.safeParse(value);
    if (!parsed.success) {
      countRow(rowTypes, '(none)');
      diagnostics.push({ code: 'invalid_record', line, reason: 'not a Codex rollout line ({type, payload})' });
      continue;
    }
    const row = parsed.data;
    countRow(rowTypes, row.type);
    if (withOrdinal && row.ordinal === undefined) diagnostics.push({ code: 'missing_ordinal', line });
    if (!CODEX_LINE_TYPES.has(row.type)) {
      noteUnknown(row.type, line);
      continue;
    }
    const payload = row.payload ?? {};
    if (row.type === 'session_meta') {
      const meta = CodexSessionMetaSchema.safeParse(payload);
      if (meta.success) {
        sessionId ??= meta.data.id;
        version = meta.data.cli_version ?? version;
        cwd = meta.data.cwd ?? cwd;
      }
      continue;
    }
    if (row.type === 'event_msg') {
      if (payload['type'] === 'turn_aborted') {
        response = null;
        push(systemRecord(base(line, row.timestamp), 'turn_aborted', { reason: 'sigint', agent: 'codex', codexReason: payload['reason'] ?? null }), line);
      }
      continue;
    }
    if (row.type !== 'response_item') continue;

    const itemType = typeof payload['type'] === 'string' ? payload['type'] : '(none)';
    const message = CodexMessageSchema.safeParse(payload);
    if (message.success) {
      const text = message.data.content.map((c) => c.text ?? '').join('');
      if (message.data.role === 'assistant') {
        pushModel(line, row.timestamp, text ? [{ text }] : []);
        continue;
      }
      response = null;
      const b = base(line, row.timestamp);
      if (message.data.role === 'user' && text.trimStart().startsWith(CODEX_ABORT_PREFIX)) {
        push(systemRecord(b, 'turn_aborted', { reason: 'sigint', agent: 'codex' }), line);
      } else if (message.data.role !== 'user' || CODEX_INJECTED_PREFIXES.some((p) => text.trimStart().startsWith(p))) {
        push(systemRecord(b, ForeignSubtype.meta, { agent: 'codex', role: message.data.role, text: text.slice(0, 200) }), line);
      } else {
        const parts: Part[] = message.data.content.flatMap((c) =>
          c.text !== undefined ? [{ text: c.text }] : c.type === 'input_image' ? [{ text: '[image]' }] : [],
        );
        push(userRecord(b, parts), line);
      }
      continue;
    }
    const reasoning = CodexReasoningSchema.safeParse(payload);
    if (reasoning.success) {
      const texts = [...(reasoning.data.summary ?? []), ...(reasoning.data.content ?? [])].map((c) => c.text ?? '').filter((t) => t.length > 0);
      pushModel(
        line,
        row.timestamp,
        texts.map((text) => ({ text, thought: true })),
      );
      continue;
    }
    const call = callPart(payload);
    if (call) {
      callNames.set(call.functionCall!.id!, call.functionCall!.name);
      pushModel(line, row.timestamp, [call]);
      continue;
    }
    const output = CodexCallOutputSchema.safeParse(payload);
    if (output.success) {
      response = null;
      const { text, failed } = outputText(output.data.output);
      const id = output.data.call_id;
      push(
        resultRecord(base(line, row.timestamp), [{ functionResponse: { id, name: callNames.get(id) ?? 'unknown', response: responseOf(text, failed) } }]),
        line,
      );
      continue;
    }
    response = null;
    if (!CODEX_OTHER_ITEMS.has(itemType)) noteUnknown(`response_item/${itemType}`, line);
    push(systemRecord(base(line, row.timestamp), ForeignSubtype.row, { agent: 'codex', rowType: `response_item/${itemType}` }), line);
  }

  for (const [rowType, { line, count }] of unknown) diagnostics.push({ code: 'unknown_row_type', line, rowType, count });
  diagnostics.sort((a, b) => ('line' in a ? a.line : 0) - ('line' in b ? b.line : 0));
  return {
    agent: 'codex',
    agentVersion: version,
    sessionId,
    cwd,
    records: sessionId ? records : records.map((r) => ({ ...r, sessionId: 'codex-session' }) as ChatRecord),
    rowsBySource: sources,
    diagnostics,
    rowTypes,
    lines: scanned.lines,
    bytes: scanned.bytes,
    endsWithNewline: scanned.endsWithNewline,
  };
}

function callPart(payload: Record<string, unknown>): Part | null {
  const fn = CodexFunctionCallSchema.safeParse(payload);
  if (fn.success) return { functionCall: { id: fn.data.call_id, name: fn.data.name, args: parseArguments(fn.data.arguments) } };
  const custom = CodexCustomToolCallSchema.safeParse(payload);
  if (custom.success) return { functionCall: { id: custom.data.call_id, name: custom.data.name, args: { input: custom.data.input ?? '' } } };
  const shell = CodexLocalShellCallSchema.safeParse(payload);
  if (shell.success) return { functionCall: { id: shell.data.call_id, name: 'local_shell', args: { command: shell.data.action?.command ?? [] } } };
  return null;
}

/** `arguments` is a JSON string; one that is not an object is kept whole under `arguments`. */
function parseArguments(text: string | undefined): Record<string, unknown> {
  if (text === undefined || text === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // kept as written below
  }
  return { arguments: text };
}

function outputText(output: CodexOutput | undefined): { text: string; failed: boolean } {
  if (output === undefined) return { text: '', failed: false };
  if (typeof output === 'string') return { text: output, failed: false };
  if (Array.isArray(output)) return { text: output.map((c) => c.text ?? '').join(''), failed: false };
  const content = output.content;
  const text = typeof content === 'string' ? content : (content ?? []).map((c) => c.text ?? '').join('');
  return { text, failed: output.success === false };
}
