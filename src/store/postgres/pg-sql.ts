/**
 * The statements of the lease and of appends, in one place, because their
 * correctness rests on how they interact:
 *
 * - A writer holds the session's advisory lock on its own connection and the
 *   lease row's epoch. Taking over bumps the epoch (UPDATE of the lease row).
 * - Every append is ONE statement that locks the lease row FOR SHARE only if it
 *   still carries the writer's epoch. A takeover's UPDATE waits for an append
 *   in flight, and an append that starts after the takeover re-checks the row
 *   and finds the new epoch: it inserts nothing. So no record of an old writer
 *   can follow the new writer's epoch bump, and thus its first record.
 */
import { SESSION_LOCK_CLASS } from './pg-schema.js';

/** Arguments: session id. The lock key is (SESSION_LOCK_CLASS, hashtext(id)). */
export const TRY_LOCK = `SELECT pg_try_advisory_lock(${SESSION_LOCK_CLASS}, hashtext($1)) AS locked`;
export const UNLOCK = `SELECT pg_advisory_unlock(${SESSION_LOCK_CLASS}, hashtext($1)) AS unlocked`;

/** The backend holding the session's advisory lock right now, if any (the lease row alone proves nothing). */
const LOCK_PID = `(
  SELECT k.pid FROM pg_locks k
   WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
     AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND k.classid::bigint = ${SESSION_LOCK_CLASS}
     AND k.objid::bigint = (hashtext($1)::bigint & 4294967295)
   LIMIT 1)`;

/**
 * Arguments: session id. The lease row and the pid of the lock's holder. The row
 * describes the live writer only when its backend_pid is that pid: between
 * taking the lock and bumping the epoch (a few ms) a new writer holds the lock
 * while the row still names the previous one, or no row exists yet.
 */
export const LEASE_HOLDER = `SELECT l.session_id, l.epoch, l.host, l.pid, l.since, l.backend_pid, h.lock_pid
  FROM (SELECT ${LOCK_PID} AS lock_pid) h
  LEFT JOIN mend.leases l ON l.session_id = $1`;

/** Arguments: session id, host, pid, since. Run while holding the advisory lock. */
export const TAKE_LEASE = `INSERT INTO mend.leases AS l (session_id, epoch, host, pid, since, backend_pid)
  VALUES ($1, 1, $2, $3, $4, pg_backend_pid())
  ON CONFLICT (session_id) DO UPDATE
    SET epoch = l.epoch + 1, host = EXCLUDED.host, pid = EXCLUDED.pid, since = EXCLUDED.since,
        backend_pid = EXCLUDED.backend_pid, released_at = NULL
  RETURNING epoch`;

/** Arguments: session id, epoch. After a reconnect: go on only if the epoch is still ours. */
export const RECLAIM_LEASE = `UPDATE mend.leases SET backend_pid = pg_backend_pid()
  WHERE session_id = $1 AND epoch = $2 AND released_at IS NULL RETURNING epoch`;

/**
 * Arguments: session id, epoch. Fencing before a side effect: the lease row still
 * carries the writer's epoch and this very connection still holds the advisory lock.
 */
export const VERIFY_LEASE = `SELECT
    (SELECT count(*) FROM mend.leases WHERE session_id = $1 AND epoch = $2 AND released_at IS NULL)::int AS leased,
    (SELECT count(*) FROM pg_locks k
      WHERE k.locktype = 'advisory' AND k.granted AND k.pid = pg_backend_pid() AND k.objsubid = 2
        AND k.classid::bigint = ${SESSION_LOCK_CLASS} AND k.objid::bigint = (hashtext($1)::bigint & 4294967295))::int AS locked`;

/** Arguments: session id, epoch. */
export const RELEASE_LEASE = `UPDATE mend.leases SET released_at = now(), backend_pid = NULL
  WHERE session_id = $1 AND epoch = $2`;

/** Arguments: session id. The next sequence number. */
export const NEXT_SEQ = `SELECT coalesce(max(seq), 0) + 1 AS seq FROM mend.records WHERE session_id = $1`;

/**
 * One or more records in ONE statement. Arguments: $1 session id, $2 epoch,
 * $3 project root, $4 project key, $5 seqs bigint[], $6 uuids text[], $7 parent
 * uuids text[], $8 types text[], $9 record texts text[], $10 first record time,
 * $11 latest record time (or null: the server clock), $12 title (or null).
 * The session row is created by the first record and follows the last one.
 */
export const APPEND = `WITH lease AS (
    SELECT epoch FROM mend.leases WHERE session_id = $1 AND epoch = $2 AND released_at IS NULL FOR SHARE
  ), batch AS (
    SELECT * FROM unnest($5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[]) AS b(seq, uuid, parent_uuid, type, record)
  ), sess AS (
    INSERT INTO mend.sessions AS s (session_id, project_root, project_key, created_at, updated_at, last_seq, title)
    SELECT $1, $3, $4, coalesce($10::timestamptz, now()), coalesce($11::timestamptz, now()), (SELECT max(seq) FROM batch), $12 FROM lease
    ON CONFLICT (session_id) DO UPDATE
      SET last_seq = greatest(s.last_seq, EXCLUDED.last_seq),
          updated_at = greatest(s.updated_at, EXCLUDED.updated_at),
          title = coalesce(EXCLUDED.title, s.title)
    RETURNING 1
  ), ins AS (
    INSERT INTO mend.records (session_id, seq, uuid, parent_uuid, type, record)
    SELECT $1, b.seq, b.uuid, b.parent_uuid, b.type, b.record FROM batch b, lease ORDER BY b.seq
    ON CONFLICT (session_id, seq) DO NOTHING
    RETURNING seq
  )
  SELECT (SELECT count(*) FROM lease)::int AS leased, (SELECT count(*) FROM ins)::int AS inserted, (SELECT count(*) FROM sess)::int AS sessions`;

/** Arguments: session id, seqs. For an idempotent retry: what the rows at these seqs hold. */
export const RECORDS_AT = `SELECT seq, record FROM mend.records WHERE session_id = $1 AND seq = ANY($2::bigint[])`;

/** Per-connection settings of a writer: synchronous commits to start with (see PostgresLease.commitMode), and a dead peer noticed by the server within about a minute (its lock then freed). */
export const WRITER_SETTINGS = [
  `SET synchronous_commit = on`,
  `SET tcp_keepalives_idle = 20`,
  `SET tcp_keepalives_interval = 5`,
  `SET tcp_keepalives_count = 4`,
];
