/**
 * The PostgreSQL writer lease: a dedicated connection holding the session's
 * advisory lock, and the lease row's epoch (the fencing token) checked by every
 * append in the same statement that inserts the record (see pg-sql.ts).
 *
 * A lost connection is retried with bounded backoff; after reconnecting the
 * writer goes on only if it takes the advisory lock again and its epoch is still
 * current. Otherwise, and for ever after, appends fail with session_lease_lost.
 * Retrying an append re-sends the same seq, so a commit whose answer was lost is
 * recognised (same text at that seq) instead of written twice.
 */
import type pg from 'pg';
import { MendError } from '../../errors.js';
import type { ActiveWriter } from '../../session/active-writer.js';
import { validateChatRecord } from '../../session/record-validation.js';
import type { ChatRecord } from '../../session/records.js';
import { projectKey } from '../../session/session-ids.js';
import type { AppendOptions, SessionRef, WriterLease } from '../session-store.js';
import type { PgDatabase } from './pg-database.js';
import { isConnectionError, unavailable, writeError } from './pg-errors.js';
import { leaseHolder } from './pg-reads.js';
import { batchParams, recordInsert, RecordRowSchema, type RecordInsert } from './pg-rows.js';
import { APPEND, RECLAIM_LEASE, RECORDS_AT, RELEASE_LEASE, TRY_LOCK, UNLOCK, VERIFY_LEASE, WRITER_SETTINGS } from './pg-sql.js';
import { z } from 'zod';

const AppendResultRow = z.object({ leased: z.number().int(), inserted: z.number().int() });
/** How many acknowledged rows a writer keeps to re-append after a database lost them. */
const ACKED_WINDOW = 10_000;
/** Rows per statement of a create (one transaction whatever its size). */
const CREATE_BATCH = 1000;
const VerifyRow = z.object({ leased: z.number().int(), locked: z.number().int() });

export class PostgresLease implements WriterLease {
  private released = false;
  private lost: MendError | null = null;
  /** Appends run one at a time, in call order, on the one connection. */
  private tail: Promise<void> = Promise.resolve();
  /** synchronous_commit of the current connection (WRITER_SETTINGS start it at on). */
  private synchronousCommit: 'on' | 'off' = 'on';

  constructor(
    private readonly db: PgDatabase,
    readonly ref: SessionRef,
    readonly holder: ActiveWriter & { epoch: number },
    private client: pg.Client | null,
    private nextSeq: number,
  ) {}

  get epoch(): number {
    return this.holder.epoch;
  }

  /** The backend pid of the writer's connection (for tests and diagnostics), or null while disconnected. */
  get backendPid(): number | null {
    return (this.client as unknown as { processID?: number } | null)?.processID ?? null;
  }

  append(record: ChatRecord, options: AppendOptions): Promise<void> {
    return this.appendBatch([record], options);
  }

  /**
   * Several records in order, as ONE statement (import uses it): all or none,
   * under the same epoch check as a single append. Optional in WriterLease.
   */
  appendBatch(records: readonly ChatRecord[], options: AppendOptions): Promise<void> {
    const run = this.tail.then(() => this.appendNow(records, options));
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * A new session's records in ONE transaction (a fork): the session row appears with
   * its last record, never before. The records go in statements of CREATE_BATCH rows,
   * each under the epoch check of an append.
   */
  createWith(records: readonly ChatRecord[]): Promise<void> {
    const run = this.tail.then(() => this.createNow(records));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async createNow(records: readonly ChatRecord[]): Promise<void> {
    if (this.released) throw new Error(`internal: create of ${this.ref.location} after its lease was released`);
    if (this.lost) throw this.lost;
    if (records.length === 0) throw new MendError('internal', `a session is created with at least one record (${this.ref.sessionId})`);
    if (this.nextSeq !== 1) throw new MendError('session_exists', `session ${this.ref.sessionId} already exists`, { sessionId: this.ref.sessionId });
    const rows = this.rowsFor(records);
    for (let attempt = 0; ; attempt++) {
      const client = this.client ?? (await this.reconnect());
      try {
        await this.commitMode(client, true);
        await client.query('BEGIN');
        for (let i = 0; i < rows.length; i += CREATE_BATCH) {
          const batch = rows.slice(i, i + CREATE_BATCH);
          const result = AppendResultRow.parse((await client.query(APPEND, this.appendParams(batch))).rows[0]);
          if (result.leased === 0) {
            await client.query('ROLLBACK');
            throw await this.loseLease(client, 'its epoch is no longer current (another writer took the session over)');
          }
          // Rows already there: this very transaction committed before its answer was lost.
          if (result.inserted < batch.length) await this.confirmRetried(client, batch);
        }
        await client.query('COMMIT');
        this.nextSeq += rows.length;
        this.remember(rows);
        return;
      } catch (error) {
        await rollback(client);
        if (error instanceof MendError) throw error;
        if (!isConnectionError(error) || attempt >= this.db.tuning.reconnectAttempts) {
          throw unavailable(this.db.target, error, `creating session ${this.ref.sessionId} with ${rows.length} records`);
        }
        await this.dropClient();
      }
    }
  }

  /**
   * Fencing before a side effect: one statement on the writer's own connection proves
   * the epoch is still current and the advisory lock still held. A dropped connection
   * is reconnected as for an append (lock and epoch must both still be ours), so a
   * writer whose session was taken over meanwhile learns it here, before it acts.
   */
  verify(): Promise<void> {
    const run = this.tail.then(() => this.verifyNow());
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async verifyNow(): Promise<void> {
    if (this.released) throw new Error(`internal: lease of ${this.ref.location} checked after it was released`);
    if (this.lost) throw this.lost;
    for (let attempt = 0; ; attempt++) {
      const client = this.client ?? (await this.reconnect());
      try {
        const row = VerifyRow.parse((await client.query(VERIFY_LEASE, [this.ref.sessionId, this.epoch])).rows[0]);
        if (row.leased === 0) throw await this.loseLease(client, 'its epoch is no longer current (another writer took the session over)');
        if (row.locked === 0) throw await this.loseLease(client, 'its connection no longer holds the session lock');
        return;
      } catch (error) {
        if (error instanceof MendError) throw error;
        if (!isConnectionError(error) || attempt >= this.db.tuning.reconnectAttempts) throw writeError(this.db.target, error, 'checking the writer lease');
        await this.dropClient();
      }
    }
  }

  private rowsFor(records: readonly ChatRecord[]): RecordInsert[] {
    return records.map((record, i) => {
      const check = validateChatRecord(record);
      if (!check.ok) throw new MendError('session_write_failed', `Refusing to write an invalid record: ${check.reason}`, { uuid: record.uuid });
      if (record.sessionId !== this.ref.sessionId) {
        throw new MendError('session_write_failed', `Refusing to write a record of session ${record.sessionId} into session ${this.ref.sessionId}`, {
          sessionId: this.ref.sessionId,
        });
      }
      return recordInsert(this.ref.sessionId, this.nextSeq + i, record, JSON.stringify(record));
    });
  }

  /** The APPEND statement's parameters for these rows, under this writer's epoch. */
  private appendParams(rows: Parameters<typeof batchParams>[0]): unknown[] {
    const batch = batchParams(rows);
    return [
      this.ref.sessionId,
      this.epoch,
      this.ref.projectRoot,
      projectKey(this.ref.projectRoot),
      batch.seqs,
      batch.uuids,
      batch.parents,
      batch.types,
      batch.texts,
      batch.firstTime,
      batch.lastTime,
      batch.title,
    ];
  }

  private async appendNow(records: readonly ChatRecord[], options: AppendOptions): Promise<void> {
    if (this.released) throw new Error(`internal: append to ${this.ref.location} after its lease was released`);
    if (this.lost) throw this.lost;
    if (records.length === 0) return;
    const rows = this.rowsFor(records);
    const params = this.appendParams(rows);
    const what = rows.length === 1 ? `record ${rows[0]!.seq}` : `records ${rows[0]!.seq}-${rows.at(-1)!.seq}`;
    for (let attempt = 0; ; attempt++) {
      const client = this.client ?? (await this.reconnect());
      try {
        await this.commitMode(client, options.durable);
        const result = AppendResultRow.parse((await client.query(APPEND, params)).rows[0]);
        if (result.leased === 0) throw await this.loseLease(client, 'its epoch is no longer current (another writer took the session over)');
        if (result.inserted < rows.length) await this.confirmRetried(client, rows);
        this.nextSeq += rows.length;
        this.remember(rows);
        return;
      } catch (error) {
        if (error instanceof MendError) throw error;
        // A commit the server refused (disk full, I/O error, a failed deferred check) stores nothing:
        // the turn stops with store_unavailable, as for a full disk under the JSONL store.
        if (!isConnectionError(error) || attempt >= this.db.tuning.reconnectAttempts) throw unavailable(this.db.target, error, `appending ${what}`);
        await this.dropClient();
      }
    }
  }

  /**
   * Every append commits synchronously (on the server's disk when the append
   * resolves), whatever `durable` says: an append that resolves is acknowledged to
   * clients (printed, streamed, answered), and a record acknowledged must survive a
   * database crash. An asynchronous commit could be lost by a crash of the server
   * while the writer goes on, and the writer would then chain its next record onto
   * one that no longer exists. The setting is only sent when it changes (a server or
   * role default of `off` does not weaken it: WRITER_SETTINGS set it on connect).
   */
  private async commitMode(client: pg.Client, _durable: boolean): Promise<void> {
    if (this.synchronousCommit === 'on') return;
    await client.query(`SET synchronous_commit = on`);
    this.synchronousCommit = 'on';
  }

  /**
   * Some seqs already held rows: fine if they hold these very records (a commit
   * whose answer was lost, re-sent), else a bug or a foreign writer.
   */
  private async confirmRetried(client: pg.Client, rows: readonly RecordInsert[]): Promise<void> {
    const stored = new Map<number, string>();
    for (const raw of (await client.query(RECORDS_AT, [this.ref.sessionId, rows.map((r) => r.seq)])).rows) {
      const row = RecordRowSchema.parse(raw);
      stored.set(row.seq, row.record);
    }
    const clash = rows.find((r) => stored.get(r.seq) !== r.text);
    if (clash === undefined) return;
    throw new MendError('session_write_failed', `Session ${this.ref.sessionId} already holds another record at seq ${clash.seq}`, {
      sessionId: this.ref.sessionId,
      seq: clash.seq,
    });
  }

  /**
   * The rows this writer appended and was told were committed, newest last (at most
   * ACKED_WINDOW): after a reconnect they are checked, and re-appended if the server
   * lost them.
   */
  private acked: RecordInsert[] = [];

  private remember(rows: readonly RecordInsert[]): void {
    this.acked.push(...rows);
    if (this.acked.length > ACKED_WINDOW) this.acked.splice(0, this.acked.length - ACKED_WINDOW);
  }

  /**
   * After any reconnect, before anything else is appended: the last record this
   * writer had acknowledged must still be stored (a database that crashed, or failed
   * over, may have lost commits). Missing ones it still holds are appended again at
   * their own seqs, in one statement; if it no longer holds them all, it gives the
   * lease up with a clear error rather than chain a new record onto a missing one.
   */
  private async checkAcknowledged(client: pg.Client): Promise<void> {
    const last = this.acked.at(-1);
    if (last === undefined) return;
    const storedRows = (await client.query(RECORDS_AT, [this.ref.sessionId, this.acked.map((r) => r.seq)])).rows.map((raw) => RecordRowSchema.parse(raw));
    const stored = new Map(storedRows.map((row) => [row.seq, row.record]));
    if (stored.get(last.seq) === last.text) return;
    // What a lost commit leaves: a suffix of this writer's rows gone, everything before it intact.
    const firstMissing = this.acked.findIndex((r) => !stored.has(r.seq));
    const missing = this.acked.slice(firstMissing);
    const clash = this.acked.find((r) => stored.has(r.seq) && stored.get(r.seq) !== r.text);
    if (clash !== undefined) throw await this.giveUp(client, `seq ${clash.seq} holds another record than the one this writer committed there`);
    if (missing.some((r) => stored.has(r.seq))) throw await this.giveUp(client, 'rows in the middle of what it committed are missing');
    const anchor = missing[0]!.seq - 1;
    if (anchor > 0 && !stored.has(anchor) && (await client.query(RECORDS_AT, [this.ref.sessionId, [anchor]])).rows.length === 0) {
      throw await this.giveUp(client, `records before seq ${missing[0]!.seq}, which it no longer holds, are missing too`);
    }
    const params = this.appendParams(missing);
    const result = AppendResultRow.parse((await client.query(APPEND, params)).rows[0]);
    if (result.leased === 0) throw await this.loseLease(client, 'its epoch is no longer current (another writer took the session over)');
    if (result.inserted < missing.length) await this.confirmRetried(client, missing);
  }

  /** Ends this lease for good after a loss it cannot repair: unlocks, and every later append fails with this error. */
  private async giveUp(client: pg.Client, why: string): Promise<MendError> {
    this.lost = new MendError(
      'session_write_failed',
      `Session ${this.ref.sessionId}: after reconnecting, the records this writer had committed are not all stored (${why}); the writer gave up its lease instead of appending onto a missing record. Load the session to see its plan.`,
      { sessionId: this.ref.sessionId, epoch: this.epoch, lastAcknowledgedSeq: this.acked.at(-1)?.seq },
    );
    await client.query(RELEASE_LEASE, [this.ref.sessionId, this.epoch]).catch(() => undefined);
    await client.query(UNLOCK, [this.ref.sessionId]).catch(() => undefined);
    return this.lost;
  }

  /** From now on every append fails; the error names who holds the session now, when someone does. */
  private async loseLease(client: pg.Client, why: string): Promise<MendError> {
    let now: { host: string; pid: number; epoch: number } | null = null;
    try {
      const holder = await leaseHolder(client, this.ref.sessionId, 500);
      if (holder.current && holder.row) now = { host: holder.row.host, pid: holder.row.pid, epoch: holder.row.epoch };
    } catch {
      // Naming the new holder is a courtesy; the lease is lost either way.
    }
    const by = now ? ` Now held by pid ${now.pid} on ${now.host} (epoch ${now.epoch}).` : '';
    this.lost = new MendError('session_lease_lost', `The writer lease of session ${this.ref.sessionId} (epoch ${this.epoch}) was lost: ${why}.${by}`, {
      sessionId: this.ref.sessionId,
      epoch: this.epoch,
      ...(now ? { holder: now } : {}),
    });
    if (this.client === client) void this.dropClient();
    return this.lost;
  }

  /** Bounded backoff; then the advisory lock and the epoch must both still be ours. */
  private async reconnect(): Promise<pg.Client> {
    const { reconnectAttempts, reconnectBaseDelayMs } = this.db.tuning;
    let lastError: unknown;
    for (let attempt = 0; attempt < reconnectAttempts; attempt++) {
      await sleep(reconnectBaseDelayMs * 2 ** attempt);
      let client: pg.Client;
      try {
        client = await this.db.connectDedicated(`reconnecting the writer of session ${this.ref.sessionId}`);
      } catch (error) {
        lastError = error;
        continue;
      }
      try {
        for (const sql of WRITER_SETTINGS) await client.query(sql);
        const locked = (await client.query<{ locked: boolean }>(TRY_LOCK, [this.ref.sessionId])).rows[0]?.locked === true;
        if (!locked) {
          const lost = await this.loseLease(client, 'another writer holds the session lock');
          await client.end().catch(() => undefined);
          throw lost;
        }
        const reclaimed = (await client.query(RECLAIM_LEASE, [this.ref.sessionId, this.epoch])).rowCount === 1;
        if (!reclaimed) {
          await client.query(UNLOCK, [this.ref.sessionId]).catch(() => undefined);
          const lost = await this.loseLease(client, 'its epoch is no longer current (another writer took the session over)');
          await client.end().catch(() => undefined);
          throw lost;
        }
        this.synchronousCommit = 'on';
        await this.checkAcknowledged(client);
        this.client = client;
        return client;
      } catch (error) {
        if (error instanceof MendError) {
          await client.end().catch(() => undefined);
          throw error;
        }
        lastError = error;
        await client.end().catch(() => undefined);
      }
    }
    throw writeError(this.db.target, lastError, `reconnecting the writer of session ${this.ref.sessionId}`);
  }

  private async dropClient(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.tail;
    const client = this.client;
    this.client = null;
    if (client === null) return;
    try {
      if (!this.lost) {
        await client.query(RELEASE_LEASE, [this.ref.sessionId, this.epoch]);
        await client.query(UNLOCK, [this.ref.sessionId]);
      }
    } catch {
      // The connection is gone, and with it the advisory lock: nothing left to release.
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Ends an open transaction after a failure; a connection that is gone has ended it already. */
async function rollback(client: pg.Client): Promise<void> {
  try {
    await client.query('ROLLBACK');
  } catch {
    // Nothing left to roll back.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
