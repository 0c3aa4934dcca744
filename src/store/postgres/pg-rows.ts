/**
 * Zod schemas at the SQL boundary. Inbound rows are parsed tolerantly (the
 * driver returns bigint as text and timestamps as Date; extra columns a newer
 * migration adds are ignored); what we send is checked strictly, so a bad value
 * fails here with a clear message instead of as a constraint error.
 */
import { z } from 'zod';
import type { ChatRecord } from '../../session/records.js';

/** A bigint column as node-postgres gives it (a string, unless parsed), as a safe integer. */
export const bigintLike = z.union([z.number(), z.string(), z.bigint()]).transform((v, ctx) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) {
    ctx.addIssue({ code: 'custom', message: `not a safe integer: ${String(v)}` });
    return z.NEVER;
  }
  return n;
});
const timestampLike = z.union([z.date(), z.string()]).transform((v) => (v instanceof Date ? v.toISOString() : new Date(v).toISOString()));

export const SessionRowSchema = z.looseObject({
  session_id: z.string(),
  project_root: z.string(),
  project_key: z.string(),
  created_at: timestampLike,
  updated_at: timestampLike,
  last_seq: bigintLike,
  title: z.string().nullable().optional(),
});
export type SessionRow = z.infer<typeof SessionRowSchema>;

export const ListingRowSchema = SessionRowSchema.extend({
  records: bigintLike,
  first_ts: z.string().nullable(),
  last_ts: z.string().nullable(),
  first_prompt: z.string().nullable(),
});

export const LeaseRowSchema = z.looseObject({
  session_id: z.string(),
  epoch: bigintLike,
  host: z.string(),
  pid: z.number().int(),
  since: timestampLike,
  backend_pid: z.number().int().nullable(),
});
export type LeaseRow = z.infer<typeof LeaseRowSchema>;

/** The lease row (absent for a session never leased) and the lock holder's backend pid (null: nobody holds it). */
export const LeaseHolderRowSchema = z.looseObject({
  session_id: z.string().nullable(),
  lock_pid: z.number().int().nullable(),
});

export const RecordRowSchema = z.looseObject({ seq: bigintLike, record: z.string() });

/** One record as it is inserted: the exact line and the columns derived from it. */
export const RecordInsertSchema = z.strictObject({
  sessionId: z.string().min(1),
  seq: z.number().int().min(1),
  uuid: z.string().min(1),
  parentUuid: z.string().min(1).nullable(),
  type: z.enum(['user', 'assistant', 'tool_result', 'system']),
  text: z
    .string()
    .min(2)
    .refine((t) => !t.includes('\n'), 'a record line holds no newline'),
  /** The record's own timestamp when it parses, else null (the server clock is used). */
  recordTime: z.string().nullable(),
  title: z.string().nullable(),
});
export type RecordInsert = z.infer<typeof RecordInsertSchema>;

/** Session title: the latest `custom_title` system record's, as Qwen Code writes it (`systemPayload.customTitle`). */
function titleOf(record: ChatRecord): string | null {
  if (record.type !== 'system' || record.subtype !== 'custom_title') return null;
  const payload = (record as { systemPayload?: unknown }).systemPayload;
  if (typeof payload !== 'object' || payload === null) return null;
  const { customTitle, title } = payload as { customTitle?: unknown; title?: unknown };
  return typeof customTitle === 'string' ? customTitle : typeof title === 'string' ? title : null;
}

/** Several inserts as the APPEND statement's array arguments, with the session row's times and title. */
export function batchParams(rows: readonly RecordInsert[]): {
  seqs: number[];
  uuids: string[];
  parents: (string | null)[];
  types: string[];
  texts: string[];
  firstTime: string | null;
  lastTime: string | null;
  title: string | null;
} {
  const times = rows.map((r) => r.recordTime).filter((t): t is string => t !== null);
  const titles = rows.map((r) => r.title).filter((t): t is string => t !== null);
  return {
    seqs: rows.map((r) => r.seq),
    uuids: rows.map((r) => r.uuid),
    parents: rows.map((r) => r.parentUuid),
    types: rows.map((r) => r.type),
    texts: rows.map((r) => r.text),
    firstTime: times[0] ?? null,
    // The latest, not the last: a session's "updated" never moves backwards (ISO strings sort as times).
    lastTime: times.length === 0 ? null : times.reduce((a, b) => (b > a ? b : a)),
    title: titles.at(-1) ?? null,
  };
}

export function recordInsert(sessionId: string, seq: number, record: ChatRecord, text: string): RecordInsert {
  const ms = Date.parse(record.timestamp);
  return RecordInsertSchema.parse({
    sessionId,
    seq,
    uuid: record.uuid,
    parentUuid: record.parentUuid,
    type: record.type,
    text,
    recordTime: Number.isFinite(ms) ? new Date(ms).toISOString() : null,
    title: titleOf(record),
  });
}
