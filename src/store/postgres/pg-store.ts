/**
 * The shared store: sessions in PostgreSQL, any mend process on any machine that
 * reaches the database can load, plan and continue any session. Same interface
 * and same contract suite as the JSONL store.
 *
 * Reads never write: against a database without our schema every read answers
 * "nothing there" (no session, empty list, no writer). The schema is created by
 * `migrate()` or by the first write (taking a lease).
 */
import { MendError } from '../../errors.js';
import type { ActiveWriter } from '../../session/active-writer.js';
import { wholeOutline, type SessionOutline } from '../../session/outline/history-reader.js';
import type { ReadResult } from '../session-reads.js';
import { canonicalSessionId, isSessionId } from '../../session/session-ids.js';
import type { ProjectScope, RowCheckpointSlot, SessionListing, SessionRef, SessionStore, WriterIdentity, WriterLease } from '../session-store.js';
import { readCheckpointBloom, readCheckpointRow, SESSION_CHANGES, writeCheckpointRow } from './pg-checkpoints.js';
import { DEFAULT_TUNING, describeTarget, resolvePgTarget, type Env, type PgTarget, type PgTuning } from './pg-config.js';
import { PgDatabase } from './pg-database.js';
import { readError, writeError } from './pg-errors.js';
import { PostgresLease } from './pg-lease.js';
import type { MigrationResult } from './pg-migrate.js';
import { latestSessionRow, leaseHolder, listSessionRows, type LeaseHolder, readSessionRange, readSessionRows, sessionLines, sessionRow } from './pg-reads.js';
import { NEXT_SEQ, TAKE_LEASE, TRY_LOCK, WRITER_SETTINGS } from './pg-sql.js';
import { z } from 'zod';

/** The schema version that added mend.plan_checkpoints (pg-schema.ts). */
const CHECKPOINTS_SINCE = 2;

export interface PostgresStoreOptions {
  /** `postgres://…` or `postgres` (everything from PG* variables). */
  spec: string;
  /** Where PG* variables are read from (process.env in the CLI). */
  env?: Env;
  tuning?: Partial<PgTuning>;
  /** ISO clock for lease `since`. */
  now?: () => string;
  /**
   * Plan checkpoints (src/runtime/checkpoint) in mend.plan_checkpoints, one row per session
   * (pg-checkpoints.ts); `note` gets why one was not used. Off when absent (MEND_CHECKPOINTS=0 in the CLI).
   */
  checkpoints?: { note?: ((message: string) => void) | undefined } | undefined;
}

const SeqRow = z.object({ seq: z.coerce.number().int() });
const ChangesRow = z.object({ changes: z.coerce.number().int() });
const EpochRow = z.object({ epoch: z.coerce.number().int() });

export class PostgresSessionStore implements SessionStore {
  readonly kind = 'postgres' as const;
  /** Private: it holds the password; `description` is what may be shown. */
  private readonly target: PgTarget;
  private readonly db: PgDatabase;

  private readonly now: () => string;
  private readonly checkpoints: PostgresStoreOptions['checkpoints'];
  /** Set once mend.plan_checkpoints is known to exist (migration 2); a read never creates it. */
  private checkpointTable = false;

  // The spec is not kept: it may hold a password.
  constructor(options: PostgresStoreOptions) {
    this.target = resolvePgTarget(options.spec, options.env ?? process.env);
    this.db = new PgDatabase(this.target, { ...DEFAULT_TUNING, ...options.tuning });
    this.now = options.now ?? (() => new Date().toISOString());
    this.checkpoints = options.checkpoints;
  }

  /** What a log line or a JSON dump of the store shows: never the password. */
  toJSON(): { kind: 'postgres'; target: string } {
    return { kind: this.kind, target: this.description };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PostgresSessionStore(${this.description})`;
  }

  /** `host:port/database`, for messages. */
  get description(): string {
    return describeTarget(this.target);
  }

  /** Creates or upgrades the schema (`mend store migrate`). Safe to run from several processes at once. */
  migrate(): Promise<MigrationResult> {
    return this.db.migrate();
  }

  /** The applied schema version (0: not migrated). Reads only the catalogs. */
  schemaVersion(): Promise<number> {
    return this.db.schemaVersion();
  }

  private refOf(sessionId: string, projectRoot: string): SessionRef {
    return { store: 'postgres', sessionId, projectRoot, location: `postgres://${describeTarget(this.target)}?session=${sessionId}` };
  }

  async newSession(scope: ProjectScope, spelled: string): Promise<SessionRef> {
    const sessionId = canonicalSessionId(spelled);
    const ref = this.refOf(sessionId, scope.projectRoot);
    if (await this.exists(ref)) throw new MendError('session_exists', `session ${sessionId} already exists`, { sessionId });
    return ref;
  }

  async resolve(scope: ProjectScope, spelled: string): Promise<SessionRef> {
    const target = canonicalSessionId(spelled);
    if (!isSessionId(target)) {
      throw new MendError(
        'invalid_resume_target',
        `Cannot resume ${JSON.stringify(target)}: give a session id (UUID); the PostgreSQL store has no session files`,
        {
          arg: target,
        },
      );
    }
    // A session keeps the project root it was created under: another machine may
    // have the same project checked out elsewhere.
    const row = (await this.db.hasSchema()) ? await this.db.withClient('resolving a session', (c) => sessionRow(c, target)) : null;
    return this.refOf(target, row?.project_root ?? scope.projectRoot);
  }

  async latest(scope: ProjectScope): Promise<SessionRef | null> {
    if (!(await this.db.hasSchema())) return null;
    const row = await this.db.withClient('finding the latest session', (c) => latestSessionRow(c, scope.projectRoot));
    return row === null ? null : this.refOf(row.session_id, row.project_root);
  }

  async list(scope: ProjectScope): Promise<SessionListing[]> {
    if (!(await this.db.hasSchema())) return [];
    return this.db.withClient('listing sessions', (c) => listSessionRows(c, scope.projectRoot, (row) => this.refOf(row.session_id, row.project_root)));
  }

  async exists(ref: SessionRef): Promise<boolean> {
    if (!(await this.db.hasSchema())) return false;
    return (await this.db.withClient('looking up a session', (c) => sessionRow(c, ref.sessionId))) !== null;
  }

  private notFound(ref: SessionRef): MendError {
    return new MendError('session_not_found', `Session ${ref.sessionId} not found in ${describeTarget(this.target)}`, {
      sessionId: ref.sessionId,
      database: this.target.database,
    });
  }

  async read(ref: SessionRef): Promise<ReadResult> {
    if (!(await this.db.hasSchema())) throw this.notFound(ref);
    return this.db.withClient(`reading session ${ref.sessionId}`, async (c) => {
      const session = await sessionRow(c, ref.sessionId);
      if (session === null) throw this.notFound(ref);
      return readSessionRows(c, session, this.db.tuning.readBatch);
    });
  }

  /** Rows hold whole records: the outline is the full read. */
  async readOutline(ref: SessionRef): Promise<SessionOutline> {
    return wholeOutline(await this.read(ref));
  }

  /** The stored lines in seq order, byte for byte (what export writes), streamed like read(). */
  async *readLines(ref: SessionRef): AsyncIterable<string> {
    if (!(await this.db.hasSchema())) throw this.notFound(ref);
    const client = await this.db.poolClient(`exporting session ${ref.sessionId}`);
    let broken = false;
    try {
      const session = await sessionRow(client, ref.sessionId);
      if (session === null) throw this.notFound(ref);
      yield* sessionLines(client, session, this.db.tuning.readBatch);
    } catch (error) {
      broken = true;
      throw readError(this.target, error, `exporting session ${ref.sessionId}`);
    } finally {
      client.release(broken);
    }
  }

  /** The row of the session's plan checkpoint (pg-checkpoints.ts); null when checkpoints are off. */
  checkpointSlot(ref: SessionRef): RowCheckpointSlot | null {
    if (this.checkpoints === undefined || ref.foreign) return null;
    const sessionId = ref.sessionId;
    return {
      kind: 'rows',
      label: `session ${sessionId} in ${this.description}`,
      note: this.checkpoints.note,
      read: async (version) => {
        if (!(await this.db.hasSchema())) return { missing: true, lastSeq: null };
        if (!(await this.hasCheckpointTable())) return { unusable: "the store's schema has no checkpoint table yet (mend store migrate)", lastSeq: null };
        const readBloom = (crc: number): Promise<Uint8Array | null> =>
          this.db.withClient(`reading the plan checkpoint of session ${sessionId}`, (c) => readCheckpointBloom(c, sessionId, crc));
        return this.db.withClient(`reading the plan checkpoint of session ${sessionId}`, (c) => readCheckpointRow(c, sessionId, version, readBloom));
      },
      readAll: async () => {
        if (!(await this.db.hasSchema())) throw this.notFound(ref);
        const table = await this.hasCheckpointTable();
        return this.db.withClient(`reading session ${sessionId}`, async (c) => {
          // The change count first: a checkpoint of these rows is valid only if nothing changed them after it.
          const changes = table ? ChangesRow.parse((await c.query(SESSION_CHANGES, [sessionId])).rows[0]).changes : null;
          const session = await sessionRow(c, sessionId);
          if (session === null) throw this.notFound(ref);
          return { outline: wholeOutline(await readSessionRows(c, session, this.db.tuning.readBatch)), lastSeq: session.last_seq, changes };
        });
      },
      readRows: async (from, to) =>
        wholeOutline(await this.db.withClient(`reading session ${sessionId}`, (c) => readSessionRange(c, sessionId, from, to, this.db.tuning.readBatch))),
      write: (checkpoint) =>
        this.db.withClient(`writing the plan checkpoint of session ${sessionId}`, (c) => writeCheckpointRow(c, sessionId, checkpoint), 'write'),
    };
  }

  private async hasCheckpointTable(): Promise<boolean> {
    if (this.checkpointTable) return true;
    this.checkpointTable = (await this.db.schemaVersion()) >= CHECKPOINTS_SINCE;
    return this.checkpointTable;
  }

  async activeWriter(ref: SessionRef): Promise<ActiveWriter | null> {
    if (!(await this.db.hasSchema())) return null;
    const holder = await this.db.withClient('looking up the writer', (c) => leaseHolder(c, ref.sessionId));
    // The row survives its writer; only a held advisory lock proves a live one.
    if (!holder.locked) return null;
    return writerOf(holder);
  }

  async acquire(ref: SessionRef, who: WriterIdentity): Promise<WriterLease> {
    const since = this.now();
    const client = await this.db.connectDedicated(`taking the writer lease of session ${ref.sessionId}`);
    try {
      await this.db.ensureSchema(client);
      for (const sql of WRITER_SETTINGS) await client.query(sql);
      const locked = (await client.query<{ locked: boolean }>(TRY_LOCK, [ref.sessionId])).rows[0]?.locked === true;
      if (!locked) {
        const writer = writerOf(await leaseHolder(client, ref.sessionId));
        const details = { sessionId: ref.sessionId, host: writer.host, pid: writer.pid, since: writer.since, epoch: writer.epoch ?? 0 };
        throw new MendError(
          'session_locked',
          `Session ${ref.sessionId} is being written by another mend process (pid ${details.pid} on ${details.host}, since ${details.since}, epoch ${details.epoch})`,
          details,
        );
      }
      const epoch = EpochRow.parse((await client.query(TAKE_LEASE, [ref.sessionId, who.host, who.pid, since])).rows[0]).epoch;
      const nextSeq = SeqRow.parse((await client.query(NEXT_SEQ, [ref.sessionId])).rows[0]).seq;
      return new PostgresLease(this.db, ref, { store: 'postgres', host: who.host, pid: who.pid, since, epoch }, client, nextSeq);
    } catch (error) {
      await client.end().catch(() => undefined);
      if (error instanceof MendError) throw error;
      throw writeError(this.target, error, `taking the writer lease of session ${ref.sessionId}`);
    }
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** The live writer as reported; a lock whose row has not caught up (rare, ms) is reported as far as known. */
function writerOf(holder: LeaseHolder): ActiveWriter & { epoch: number } {
  const row = holder.current ? holder.row : null;
  return { store: 'postgres', host: row?.host ?? 'unknown', pid: row?.pid ?? 0, since: row?.since ?? '', epoch: row?.epoch ?? 0 };
}
