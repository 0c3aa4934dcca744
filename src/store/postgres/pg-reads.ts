/**
 * Reads of the PostgreSQL store. None of them writes or creates anything: the
 * caller checks first that the schema exists and treats a database without it
 * as an empty store.
 *
 * A session is streamed by seq in range batches (seq > a AND seq <= a + n, up
 * to the session row's last_seq) straight into readRecordLines, so a
 * 100k-record session is never one result set in memory, and validation,
 * fragment merging and diagnostics are the very code the JSONL reader runs. A
 * bounded range, not `ORDER BY seq LIMIT n`: with stale statistics the planner
 * answers a LIMIT query by sorting the whole session for every batch (measured:
 * 0.7 s a batch at 100k records), while a range costs the same whatever the
 * plan. Seqs are dense (one writer numbers them), so a range holds n records.
 * The next batch is fetched while the current one is parsed. Records appended
 * after the session row was read are not part of this read, as if it had
 * been taken a moment earlier.
 */
import type pg from 'pg';
import { readRecordLines } from '../../session/log-reader.js';
import type { ReadResult } from '../session-reads.js';
import { projectKey } from '../../session/session-ids.js';
import type { SessionListing, SessionRef } from '../session-store.js';
import { LeaseHolderRowSchema, LeaseRowSchema, ListingRowSchema, RecordRowSchema, SessionRowSchema, type LeaseRow, type SessionRow } from './pg-rows.js';
import { LEASE_HOLDER } from './pg-sql.js';

export const READ_BATCH = 5000;

const BATCH = `SELECT seq, record FROM mend.records WHERE session_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`;

type Row = { position: number; text: string };

/**
 * Rows come as [seq, record] arrays (no object per row); the zod schema is the
 * boundary's definition and judges any row that is not the expected shape.
 */
function toRow(raw: unknown[]): Row {
  const [seq, record] = raw;
  if (typeof seq === 'string' && typeof record === 'string') return { position: Number(seq), text: record };
  const row = RecordRowSchema.parse({ seq, record });
  return { position: row.seq, text: row.record };
}

async function* recordRows(client: pg.ClientBase, sessionId: string, lastSeq: number, batch: number, first = 1): AsyncGenerator<Row> {
  // Positions count from `first` (line 1): a whole read's are its seqs.
  const shift = first - 1;
  const fetch = async (after: number): Promise<Row[]> =>
    (await client.query<unknown[]>({ text: BATCH, values: [sessionId, after, Math.min(after + batch, lastSeq)], rowMode: 'array' })).rows.map((raw) => {
      const row = toRow(raw);
      return shift === 0 ? row : { position: row.position - shift, text: row.text };
    });
  let pending: Promise<Row[]> | null = lastSeq > shift ? fetch(shift) : null;
  for (let after = shift; pending !== null; after += batch) {
    const rows = await pending;
    pending = after + batch < lastSeq ? fetch(after + batch) : null;
    // Keep the prefetch from becoming an unhandled rejection while this batch is consumed.
    pending?.catch(() => undefined);
    yield* rows;
  }
}

export function readSessionRows(client: pg.ClientBase, session: SessionRow, batch = READ_BATCH): Promise<ReadResult> {
  return readRecordLines(recordRows(client, session.session_id, session.last_seq, batch));
}

/** Rows `first`..`last` of a session, read like readSessionRows with seq `first` as position 1. */
export function readSessionRange(client: pg.ClientBase, sessionId: string, first: number, last: number, batch = READ_BATCH): Promise<ReadResult> {
  return readRecordLines(recordRows(client, sessionId, last, batch, first));
}

/** The raw lines of a session in seq order, exactly as stored (for export). */
export async function* sessionLines(client: pg.ClientBase, session: SessionRow, batch = READ_BATCH): AsyncGenerator<string> {
  for await (const row of recordRows(client, session.session_id, session.last_seq, batch)) yield row.text;
}

export async function sessionRow(client: pg.ClientBase, sessionId: string): Promise<SessionRow | null> {
  const raw = (await client.query(`SELECT * FROM mend.sessions WHERE session_id = $1`, [sessionId])).rows[0];
  return raw === undefined ? null : SessionRowSchema.parse(raw);
}

export async function latestSessionRow(client: pg.ClientBase, projectRoot: string): Promise<SessionRow | null> {
  const raw = (
    await client.query(`SELECT * FROM mend.sessions WHERE project_key = $1 ORDER BY updated_at DESC, session_id DESC LIMIT 1`, [projectKey(projectRoot)])
  ).rows[0];
  return raw === undefined ? null : SessionRowSchema.parse(raw);
}

/**
 * One row per session of the project (Qwen's project key, like the JSONL
 * folder), with what a listing shows: record count (records sharing a uuid are
 * fragments of one, as the reader merges them), first and last record times, and
 * the first text part of the first user record, taken from the generated jsonb.
 */
const LISTING = `SELECT s.*,
    (SELECT count(DISTINCT r.uuid) FROM mend.records r WHERE r.session_id = s.session_id) AS records,
    (SELECT r.record_json->>'timestamp' FROM mend.records r WHERE r.session_id = s.session_id ORDER BY r.seq LIMIT 1) AS first_ts,
    (SELECT r.record_json->>'timestamp' FROM mend.records r WHERE r.session_id = s.session_id ORDER BY r.seq DESC LIMIT 1) AS last_ts,
    (SELECT p.part->>'text'
       FROM (SELECT r.record_json FROM mend.records r
              WHERE r.session_id = s.session_id AND r.type = 'user' ORDER BY r.seq LIMIT 1) u,
            jsonb_array_elements(CASE WHEN jsonb_typeof(u.record_json->'message'->'parts') = 'array'
                                      THEN u.record_json->'message'->'parts' ELSE '[]'::jsonb END)
              WITH ORDINALITY AS p(part, n)
      WHERE jsonb_typeof(p.part->'text') = 'string' ORDER BY p.n LIMIT 1) AS first_prompt
  FROM mend.sessions s WHERE s.project_key = $1`;

export async function listSessionRows(client: pg.ClientBase, scopeRoot: string, refOf: (row: SessionRow) => SessionRef): Promise<SessionListing[]> {
  const rows = (await client.query(LISTING, [projectKey(scopeRoot)])).rows.map((raw) => ListingRowSchema.parse(raw));
  return rows
    .map((row) => ({
      ref: refOf(row),
      started: row.first_ts,
      lastUpdate: row.last_ts,
      records: row.records,
      firstPrompt: row.first_prompt === null ? null : row.first_prompt.slice(0, 200),
      ...(typeof row.title === 'string' ? { title: row.title } : {}),
    }))
    .sort((a, b) => (b.lastUpdate ?? '').localeCompare(a.lastUpdate ?? ''));
}

export interface LeaseHolder {
  /** The lease row, or null for a session never leased. */
  row: LeaseRow | null;
  /** Someone holds the session's advisory lock. */
  locked: boolean;
  /** The row describes the lock's holder (false while a new writer is between lock and epoch bump). */
  current: boolean;
}

async function leaseHolderOnce(client: pg.ClientBase, sessionId: string): Promise<LeaseHolder> {
  const raw = (await client.query(LEASE_HOLDER, [sessionId])).rows[0] as Record<string, unknown>;
  const head = LeaseHolderRowSchema.parse(raw);
  const row = head.session_id === null ? null : LeaseRowSchema.parse(raw);
  const locked = head.lock_pid !== null;
  return { row, locked, current: locked && row !== null && row.backend_pid === head.lock_pid };
}

/**
 * Who holds the session's lease. A writer that just took the lock bumps the
 * row a few ms later: wait up to `settleMs` for the row to name the lock's
 * holder, so a refused writer is told who won instead of "unknown".
 */
export async function leaseHolder(client: pg.ClientBase, sessionId: string, settleMs = 2000): Promise<LeaseHolder> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const holder = await leaseHolderOnce(client, sessionId);
    if (!holder.locked || holder.current || Date.now() >= deadline) return holder;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
