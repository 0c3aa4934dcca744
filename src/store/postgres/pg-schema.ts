/**
 * The store's tables, as versioned migrations. Everything lives in its own
 * schema (`mend`), so a shared database keeps our tables apart and "nothing was
 * created" is one look-up. A migration is only ever appended here, never edited:
 * a database that applied version N must mean the same thing on every machine.
 *
 * - sessions: one row per session, created by its first record. `created_at` and
 *   `updated_at` are the first and last records' own timestamps (the server clock
 *   when a record carries none), so "latest" means what it means for JSONL logs.
 * - records: append-only. `record` is the JSON line exactly as written, without
 *   its newline; `record_json` is generated from it for queries (listing).
 *   (session_id, seq) is unique and seq counts 1, 2, 3 … per session.
 * - leases: one row per session that was ever leased; `epoch` only grows (the
 *   fencing token), so a row is never deleted.
 * - plan_checkpoints (2): one row per session, a cache of what its plan needs from
 *   the rows before a cut (src/runtime/checkpoint, pg-checkpoints.ts). Any read may
 *   write it; nothing requires it; deleting every row of it loses nothing.
 * - record_changes (2): how many statements ever updated or deleted a session's
 *   records (session '' counts TRUNCATEs). Records are append-only, so this stays
 *   empty unless someone bypassed the append-only trigger; a checkpoint is valid
 *   only for the count it was written under. Its triggers fire even for a replica
 *   (ENABLE ALWAYS) and cost an append nothing (they fire on UPDATE, DELETE and
 *   TRUNCATE only).
 */
export const SCHEMA = 'mend';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, records, leases',
    sql: `
      CREATE TABLE mend.sessions (
        session_id   text PRIMARY KEY,
        project_root text NOT NULL,
        project_key  text NOT NULL,
        created_at   timestamptz NOT NULL,
        updated_at   timestamptz NOT NULL,
        last_seq     bigint NOT NULL CHECK (last_seq >= 1),
        title        text
      );
      CREATE INDEX sessions_by_project ON mend.sessions (project_key, updated_at DESC);

      CREATE TABLE mend.records (
        session_id  text NOT NULL REFERENCES mend.sessions (session_id),
        seq         bigint NOT NULL CHECK (seq >= 1),
        uuid        text NOT NULL,
        parent_uuid text,
        type        text NOT NULL,
        record      text NOT NULL,
        record_json jsonb GENERATED ALWAYS AS (record::jsonb) STORED,
        written_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (session_id, seq)
      );

      CREATE TABLE mend.leases (
        session_id  text PRIMARY KEY,
        epoch       bigint NOT NULL CHECK (epoch >= 1),
        host        text NOT NULL,
        pid         integer NOT NULL,
        since       timestamptz NOT NULL,
        backend_pid integer,
        released_at timestamptz
      );

      -- Records are append-only: refuse UPDATE and DELETE at the database, not only in our code.
      CREATE FUNCTION mend.refuse_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'mend.records is append-only' USING ERRCODE = 'insufficient_privilege';
      END $$;
      CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON mend.records
        FOR EACH ROW EXECUTE FUNCTION mend.refuse_record_change();
    `,
  },
  {
    version: 2,
    name: 'plan checkpoints',
    sql: `
      CREATE TABLE mend.plan_checkpoints (
        session_id  text PRIMARY KEY,
        version     integer NOT NULL,
        cut_seq     bigint NOT NULL CHECK (cut_seq >= 1),
        covered_seq bigint NOT NULL CHECK (covered_seq >= cut_seq),
        head_to     bigint NOT NULL CHECK (head_to >= 0),
        tail_from   bigint NOT NULL CHECK (tail_from >= 1),
        changes     bigint NOT NULL,
        head_hash   text NOT NULL,
        tail_hash   text NOT NULL,
        body        text NOT NULL,
        crc         bigint NOT NULL,
        bloom       bytea NOT NULL,
        bloom_crc   bigint NOT NULL,
        written_at  timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE mend.record_changes (
        session_id text PRIMARY KEY,
        changes    bigint NOT NULL CHECK (changes >= 1)
      );

      CREATE FUNCTION mend.count_record_changes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN
          INSERT INTO mend.record_changes AS c (session_id, changes)
            SELECT session_id, 1 FROM (SELECT session_id FROM old_rows UNION SELECT session_id FROM new_rows) s
            ON CONFLICT (session_id) DO UPDATE SET changes = c.changes + 1;
        ELSIF TG_OP = 'DELETE' THEN
          INSERT INTO mend.record_changes AS c (session_id, changes)
            SELECT DISTINCT session_id, 1 FROM old_rows
            ON CONFLICT (session_id) DO UPDATE SET changes = c.changes + 1;
        ELSE
          INSERT INTO mend.record_changes AS c (session_id, changes) VALUES ('', 1)
            ON CONFLICT (session_id) DO UPDATE SET changes = c.changes + 1;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER records_updated AFTER UPDATE ON mend.records
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION mend.count_record_changes();
      CREATE TRIGGER records_deleted AFTER DELETE ON mend.records
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION mend.count_record_changes();
      CREATE TRIGGER records_truncated AFTER TRUNCATE ON mend.records
        FOR EACH STATEMENT EXECUTE FUNCTION mend.count_record_changes();
      ALTER TABLE mend.records ENABLE ALWAYS TRIGGER records_updated;
      ALTER TABLE mend.records ENABLE ALWAYS TRIGGER records_deleted;
      ALTER TABLE mend.records ENABLE ALWAYS TRIGGER records_truncated;
    `,
  },
];

export const LATEST_VERSION = MIGRATIONS.at(-1)!.version;

/**
 * Advisory lock keys. Session locks use the two-int4 form (class, hash of the id)
 * so they can be found in pg_locks (classid/objid) and never meet the one-bigint
 * migration key below.
 */
export const SESSION_LOCK_CLASS = 0x6d656e64; // 'mend'
export const MIGRATION_LOCK_KEY = '7310575183467347968'; // fixed bigint, only for migrations
