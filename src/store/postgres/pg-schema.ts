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
];

export const LATEST_VERSION = MIGRATIONS.at(-1)!.version;

/**
 * Advisory lock keys. Session locks use the two-int4 form (class, hash of the id)
 * so they can be found in pg_locks (classid/objid) and never meet the one-bigint
 * migration key below.
 */
export const SESSION_LOCK_CLASS = 0x6d656e64; // 'mend'
export const MIGRATION_LOCK_KEY = '7310575183467347968'; // fixed bigint, only for migrations
