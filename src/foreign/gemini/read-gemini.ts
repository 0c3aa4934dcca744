/**
 * Gemini CLI session -> mend records. Records are upserts by message id, replayed
 * the way Gemini CLI loads them (last copy wins in the first copy's place;
 * `$rewindTo` drops the message and all later ones). Each record's uuid is
 * Gemini's message id, its parent the message before it; a `gemini` message with
 * tool calls becomes a model record and, for the calls that have results, a
 * result record `<id>_response` (Gemini sends them the same way).
 *
 * A `gemini` record written empty (Gemini writes it before its tools finish, and
 * again with `toolCalls` after) is no model entry: killed mid-tool, the prompt is
 * unanswered and the call is lost from disk, which the plan says as it is.
 */
import type { LoadDiagnostic } from '../../session/conversation.js';
import type { ChatRecord, Part } from '../../session/records.js';
import type { ForeignAdapter, ForeignRowSource, ForeignSession } from '../adapter.js';
import { countRow, headObjects, scanJsonLines, type ForeignLine } from '../foreign-lines.js';
import { ForeignSubtype, modelRecord, resultRecord, systemRecord, userRecord, type Base } from '../foreign-records.js';
import { GEMINI_MESSAGE_TYPES, GeminiLegacyFileSchema, GeminiMessageSchema, GeminiMetadataSchema, type GeminiMessage } from './gemini-rows.js';

function looksLikeGeminiLine(row: Record<string, unknown>): boolean {
  if (typeof row['sessionId'] === 'string' && typeof row['projectHash'] === 'string') return true;
  if (typeof row['$rewindTo'] === 'string') return true;
  return typeof row['id'] === 'string' && typeof row['type'] === 'string' && GEMINI_MESSAGE_TYPES.has(row['type']) && 'content' in row && !('uuid' in row);
}

function looksLikeLegacyJson(head: Buffer): boolean {
  const text = head.toString('utf8').trimStart();
  return text.startsWith('{') && /"sessionId"\s*:/.test(text) && /"projectHash"\s*:/.test(text) && /"messages"\s*:/.test(text);
}

export const geminiAdapter: ForeignAdapter = {
  agent: 'gemini',
  sniff: (head) => headObjects(head).some(looksLikeGeminiLine) || looksLikeLegacyJson(head),
  read: readGemini,
};

interface Kept {
  message: GeminiMessage;
  line: number;
}

export function readGemini(bytes: Buffer): ForeignSession {
  const legacy = parseLegacy(bytes);
  const scanned = legacy
    ? {
        rows: legacy.messages,
        diagnostics: [] as LoadDiagnostic[],
        lines: bytes.toString('utf8').split('\n').length,
        bytes: bytes.length,
        endsWithNewline: bytes.at(-1) === 0x0a,
      }
    : scanJsonLines(bytes);
  const diagnostics: LoadDiagnostic[] = [...scanned.diagnostics];
  const rowTypes: Record<string, number> = {};
  const unknown = new Map<string, { line: number; count: number }>();
  let sessionId: string | null = legacy?.sessionId ?? null;
  const messages = new Map<string, Kept>();

  for (const { line, value } of scanned.rows) {
    if (typeof value['$rewindTo'] === 'string') {
      countRow(rowTypes, '$rewindTo');
      const ids = [...messages.keys()];
      const at = ids.indexOf(value['$rewindTo']);
      for (const id of at === -1 ? ids : ids.slice(at)) messages.delete(id);
      continue;
    }
    if (typeof value['$set'] === 'object' && value['$set'] !== null) {
      countRow(rowTypes, '$set');
      continue;
    }
    const meta = GeminiMetadataSchema.safeParse(value);
    if (meta.success && !('type' in value)) {
      countRow(rowTypes, 'metadata');
      sessionId ??= meta.data.sessionId;
      continue;
    }
    const message = GeminiMessageSchema.safeParse(value);
    if (!message.success) {
      const type = typeof value['type'] === 'string' ? value['type'] : '(none)';
      countRow(rowTypes, type);
      const seen = unknown.get(type);
      if (seen) seen.count++;
      else unknown.set(type, { line, count: 1 });
      continue;
    }
    countRow(rowTypes, message.data.type);
    if (!GEMINI_MESSAGE_TYPES.has(message.data.type)) {
      const seen = unknown.get(message.data.type);
      if (seen) seen.count++;
      else unknown.set(message.data.type, { line, count: 1 });
    }
    // Map.set keeps the first copy's place: the order Gemini CLI rebuilds.
    messages.set(message.data.id, { message: message.data, line });
  }

  const records: ChatRecord[] = [];
  const sources: ForeignRowSource[] = [];
  let leaf: string | null = null;
  const sid = sessionId ?? 'gemini-session';
  const push = (record: ChatRecord, line: number): void => {
    records.push(record);
    sources.push({ lines: [line] });
    leaf = record.uuid;
  };
  let model: string | null = null;
  for (const { message: m, line } of messages.values()) {
    const b: Base = { uuid: m.id, parentUuid: leaf, sessionId: sid, timestamp: m.timestamp ?? '', version: 'gemini-cli' };
    if (m.type === 'user') {
      push(userRecord(b, contentParts(m.content)), line);
    } else if (m.type === 'gemini') {
      if (m.model) model = m.model;
      const parts: Part[] = [];
      for (const t of m.thoughts ?? []) {
        const text = t.subject ? `**${t.subject}** ${t.description ?? ''}` : (t.description ?? '');
        if (text.trim()) parts.push({ text, thought: true });
      }
      parts.push(...contentParts(m.content));
      for (const call of m.toolCalls ?? []) parts.push({ functionCall: { id: call.id, name: call.name, args: call.args ?? {} } });
      push(modelRecord(b, parts, m.model), line);
      const results = (m.toolCalls ?? []).flatMap((call) => resultParts(call.id, call.name, call.result));
      if (results.length > 0) push(resultRecord({ ...b, uuid: `${m.id}_response`, parentUuid: m.id }, results), line);
    } else {
      push(
        systemRecord(b, ForeignSubtype.meta, {
          agent: 'gemini',
          rowType: m.type,
          text: contentParts(m.content)
            .map((p) => p.text ?? '')
            .join('')
            .slice(0, 200),
        }),
        line,
      );
    }
  }
  for (const [rowType, { line, count }] of unknown) diagnostics.push({ code: 'unknown_row_type', line, rowType, count });
  return {
    agent: 'gemini',
    // Gemini CLI writes no version of its own into a session; the model is all it names.
    agentVersion: null,
    sessionId,
    cwd: null,
    records,
    rowsBySource: sources,
    diagnostics,
    rowTypes: model ? { ...rowTypes } : rowTypes,
    lines: scanned.lines,
    bytes: scanned.bytes,
    endsWithNewline: scanned.endsWithNewline,
  };
}

/** The legacy whole-file JSON, or null when the bytes are not one (then they are JSONL). */
function parseLegacy(bytes: Buffer): { sessionId: string; messages: ForeignLine[] } | null {
  const text = bytes.toString('utf8').trimStart();
  if (!text.startsWith('{') || !text.includes('"messages"')) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const file = GeminiLegacyFileSchema.safeParse(value);
  if (!file.success) return null;
  const messages = file.data.messages.flatMap((m, i) =>
    typeof m === 'object' && m !== null && !Array.isArray(m) ? [{ line: i + 1, value: m as Record<string, unknown> }] : [],
  );
  return { sessionId: file.data.sessionId, messages };
}

function contentParts(content: GeminiMessage['content']): Part[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  const list = Array.isArray(content) ? content : [content];
  return list.flatMap((p) => (typeof p.text === 'string' && p.text ? [{ text: p.text }] : []));
}

/** A call's recorded result as function responses, as Gemini CLI sends them. */
function resultParts(id: string, name: string, result: unknown): Part[] {
  if (result === null || result === undefined) return [];
  if (typeof result === 'string') return [{ functionResponse: { id, name, response: { output: result } } }];
  const list = Array.isArray(result) ? result : [result];
  const parts: Part[] = [];
  for (const item of list) {
    const fr = (item as { functionResponse?: { id?: unknown; name?: unknown; response?: unknown } }).functionResponse;
    if (fr && typeof fr === 'object') {
      const response = typeof fr.response === 'object' && fr.response !== null ? (fr.response as Record<string, unknown>) : { output: fr.response };
      parts.push({ functionResponse: { id: typeof fr.id === 'string' ? fr.id : id, name: typeof fr.name === 'string' ? fr.name : name, response } });
    } else if (typeof (item as { text?: unknown }).text === 'string') {
      parts.push({ functionResponse: { id, name, response: { output: (item as { text: string }).text } } });
    }
  }
  return parts;
}
