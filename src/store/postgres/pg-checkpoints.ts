/**
 * Plan checkpoints of PostgreSQL sessions: one row per session in mend.plan_checkpoints
 * (migration 2), what the checkpoint wing (src/runtime/checkpoint) keeps of the rows before
 * a cut seq. This file holds the SQL and the row's integrity; what the body means is the
 * wing's.
 *
 * Identity: a row names the cut seq and the last seq it was made from (covered), the
 * session's change count when its rows were read (mend.record_changes: statements that
 * updated, deleted or truncated records, counted by triggers that fire even for a replica),
 * and an MD5, computed by the server, of seq, the MD5 of the text and xmin of the first
 * HEAD_ROWS rows and of the rows from TAIL_ROWS before the cut to the covered seq (the window
 * included). Reading checks them in the same statement that fetches the row (a bounded
 * amount of work whatever the session's length): a session with fewer rows, a change count
 * that moved (rows edited, deleted, replaced, the session recreated, the table truncated),
 * or rows at the hashed seqs that are not the same tuples (edited with every trigger off,
 * re-inserted, restored from a dump: new xmin) is a mismatch. Not seen: a row strictly
 * inside the prefix (past the first HEAD_ROWS, before the last TAIL_ROWS before the cut)
 * changed with every trigger of mend.records disabled (ALTER TABLE … DISABLE TRIGGER ALL,
 * a superuser's act), or by editing the record_changes counts back.
 *
 * Integrity: a CRC-32 over the version, the seqs, the change count and the body, and one
 * of the uuid filter (read only when a read needs it: rows were appended), so a torn or
 * garbled row (or one whose columns were edited) is never used.
 */
import { crc32 } from 'node:zlib';
import type pg from 'pg';
import { z } from 'zod';
import type { RowCheckpointWrite, StoredRowCheckpoint } from '../session-store.js';
import { bigintLike } from './pg-rows.js';

/** Rows hashed at the head of the session and before the cut. */
export const HEAD_ROWS = 64;
export const TAIL_ROWS = 64;

/** The session's change count ('' counts TRUNCATEs of the whole table). */
const CHANGES = `(SELECT coalesce(sum(changes), 0) FROM mend.record_changes WHERE session_id = $1 OR session_id = '')::bigint`;

/** The identity hash of the session's rows `from`..`to` ('' for none). */
const rangeHash = (from: string, to: string): string =>
  `(SELECT coalesce(md5(string_agg(r.seq::text || ':' || md5(r.record) || ':' || r.xmin::text, ',' ORDER BY r.seq)), '')
      FROM mend.records r WHERE r.session_id = $1 AND r.seq BETWEEN ${from} AND ${to})`;

/** Arguments: session id. The session's last seq, its change count and its checkpoint row with the hashes of its ranges now. */
const READ = `SELECT s.last_seq, ${CHANGES} AS changes_now,
    c.version, c.cut_seq, c.covered_seq, c.head_to, c.tail_from, c.changes, c.head_hash, c.tail_hash, c.body, c.crc,
    CASE WHEN c.session_id IS NULL THEN NULL ELSE ${rangeHash('1', 'c.head_to')} END AS head_now,
    CASE WHEN c.session_id IS NULL THEN NULL ELSE ${rangeHash('c.tail_from', 'c.covered_seq')} END AS tail_now
  FROM mend.sessions s LEFT JOIN mend.plan_checkpoints c ON c.session_id = s.session_id
  WHERE s.session_id = $1`;

/** Arguments: session id. The uuid filter of the session's checkpoint row, with the row's CRCs. */
const READ_BLOOM = `SELECT bloom, bloom_crc, crc FROM mend.plan_checkpoints WHERE session_id = $1`;

/**
 * Arguments: session id, version, cut, covered, head_to, tail_from, changes, body, crc, bloom, bloom_crc.
 * Written only while the session still has the covered rows and its change count is the one
 * its rows were read under.
 */
const WRITE = `INSERT INTO mend.plan_checkpoints AS c
    (session_id, version, cut_seq, covered_seq, head_to, tail_from, changes, head_hash, tail_hash, body, crc, bloom, bloom_crc, written_at)
  SELECT $1, $2, $3, $4, $5, $6, $7, ${rangeHash('1', '$5')}, ${rangeHash('$6', '$4')}, $8, $9, $10, $11, now()
    FROM mend.sessions s
   WHERE s.session_id = $1 AND s.last_seq >= $4 AND ${CHANGES} = $7
  ON CONFLICT (session_id) DO UPDATE SET
    version = EXCLUDED.version, cut_seq = EXCLUDED.cut_seq, covered_seq = EXCLUDED.covered_seq, head_to = EXCLUDED.head_to,
    tail_from = EXCLUDED.tail_from, changes = EXCLUDED.changes, head_hash = EXCLUDED.head_hash, tail_hash = EXCLUDED.tail_hash,
    body = EXCLUDED.body, crc = EXCLUDED.crc, bloom = EXCLUDED.bloom, bloom_crc = EXCLUDED.bloom_crc, written_at = EXCLUDED.written_at
  RETURNING 1`;

/** Arguments: session id. The session's change count (what a checkpoint of rows read after it is written under). */
export const SESSION_CHANGES = `SELECT ${CHANGES} AS changes`;

/** Inbound: tolerant of every column being null (no checkpoint) or of any type (a garbled one is judged below). */
const CheckpointReadRowSchema = z.looseObject({
  last_seq: bigintLike,
  changes_now: bigintLike,
  version: z.unknown(),
  cut_seq: z.unknown(),
  covered_seq: z.unknown(),
  head_to: z.unknown(),
  tail_from: z.unknown(),
  changes: z.unknown(),
  head_hash: z.unknown(),
  tail_hash: z.unknown(),
  body: z.unknown(),
  crc: z.unknown(),
  head_now: z.unknown(),
  tail_now: z.unknown(),
});

/** A checkpoint row's own columns, once present. */
const StoredColumnsSchema = z.object({
  version: z.number().int(),
  cut_seq: bigintLike,
  covered_seq: bigintLike,
  head_to: bigintLike,
  tail_from: bigintLike,
  changes: bigintLike,
  head_hash: z.string(),
  tail_hash: z.string(),
  body: z.string(),
  crc: bigintLike,
  head_now: z.string(),
  tail_now: z.string(),
});

/** Outbound: what a write sends, checked strictly. */
const CheckpointWriteSchema = z.strictObject({
  version: z.number().int().min(0),
  cutSeq: z.number().int().min(1),
  coveredSeq: z.number().int().min(1),
  changes: z.number().int().min(0),
  body: z.string().min(2),
  bloom: z.instanceof(Uint8Array),
});

const BloomRowSchema = z.looseObject({ bloom: z.instanceof(Uint8Array), bloom_crc: bigintLike, crc: bigintLike });

/** The CRC of what a row's body means: its version, seqs and change count, then the body. */
function rowCrc(c: { version: number; cutSeq: number; coveredSeq: number; headTo: number; tailFrom: number; changes: number; body: string }): number {
  const head = Buffer.from(JSON.stringify([c.version, c.cutSeq, c.coveredSeq, c.headTo, c.tailFrom, c.changes]), 'utf8');
  return crc32(c.body, crc32(head));
}

export type CheckpointRead = StoredRowCheckpoint | { missing: true; lastSeq: number | null } | { unusable: string; lastSeq: number | null };

/** The session's checkpoint row if it is whole and still describes the session's rows; else why not. Reads only. */
export async function readCheckpointRow(
  client: pg.ClientBase,
  sessionId: string,
  version: number,
  readBloom: (crc: number) => Promise<Uint8Array | null>,
): Promise<CheckpointRead> {
  const raw = (await client.query(READ, [sessionId])).rows[0];
  if (raw === undefined) return { missing: true, lastSeq: null };
  const row = CheckpointReadRowSchema.parse(raw);
  const lastSeq = row.last_seq;
  if (row.version === null && row.body === null) return { missing: true, lastSeq };
  const unusable = (why: string): CheckpointRead => ({ unusable: why, lastSeq });
  const parsed = StoredColumnsSchema.safeParse(row);
  if (!parsed.success) return unusable('the checkpoint row is garbled');
  const c = parsed.data;
  if (c.version !== version) return unusable(`checkpoint version ${c.version}, this mend reads ${version}`);
  const crc = rowCrc({
    version: c.version,
    cutSeq: c.cut_seq,
    coveredSeq: c.covered_seq,
    headTo: c.head_to,
    tailFrom: c.tail_from,
    changes: c.changes,
    body: c.body,
  });
  if (crc !== c.crc) return unusable('the checkpoint row is torn or garbled (CRC)');
  if (c.cut_seq > c.covered_seq || c.head_to !== Math.min(HEAD_ROWS, c.cut_seq - 1) || c.tail_from !== Math.max(1, c.cut_seq - TAIL_ROWS)) {
    return unusable('the checkpoint row names impossible seqs');
  }
  if (lastSeq < c.covered_seq) return unusable(`the session has ${lastSeq} rows, fewer than the ${c.covered_seq} it describes`);
  if (row.changes_now !== c.changes) return unusable('rows of the session were updated, deleted or truncated since it was written');
  if (c.head_now !== c.head_hash) return unusable('the first rows of the session changed');
  if (c.tail_now !== c.tail_hash) return unusable('the rows before the cut or after it changed');
  return { cutSeq: c.cut_seq, coveredSeq: c.covered_seq, lastSeq, changes: c.changes, body: c.body, readBloom: () => readBloom(c.crc) };
}

/** The uuid filter of the session's checkpoint row, if it is whole and the row is still the one whose body had CRC `crc`. */
export async function readCheckpointBloom(client: pg.ClientBase, sessionId: string, crc: number): Promise<Uint8Array | null> {
  const raw = (await client.query(READ_BLOOM, [sessionId])).rows[0];
  const row = raw === undefined ? null : BloomRowSchema.safeParse(raw);
  if (row === null || !row.success || row.data.crc !== crc || crc32(row.data.bloom) !== row.data.bloom_crc) return null;
  return row.data.bloom;
}

/** Stores the checkpoint; false when the rows it describes are gone or were changed since they were read. */
export async function writeCheckpointRow(client: pg.ClientBase, sessionId: string, write: RowCheckpointWrite): Promise<boolean> {
  const w = CheckpointWriteSchema.parse(write);
  if (w.cutSeq > w.coveredSeq) throw new Error(`a checkpoint cut (${w.cutSeq}) past its covered seq (${w.coveredSeq})`);
  const headTo = Math.min(HEAD_ROWS, w.cutSeq - 1);
  const tailFrom = Math.max(1, w.cutSeq - TAIL_ROWS);
  const crc = rowCrc({ ...w, headTo, tailFrom });
  const bloom = Buffer.from(w.bloom);
  const result = await client.query(WRITE, [sessionId, w.version, w.cutSeq, w.coveredSeq, headTo, tailFrom, w.changes, w.body, crc, bloom, crc32(bloom)]);
  return result.rowCount === 1;
}
