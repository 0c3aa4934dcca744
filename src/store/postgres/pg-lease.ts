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
import { isConnectionError, writeError } from './pg-errors.js';
import { leaseHolder } from './pg-reads.js';
import { batchParams, recordInsert, RecordRowSchema, type RecordInsert } from './pg-rows.js';
import { APPEND, RECLAIM_LEASE, RECORDS_AT, RELEASE_LEASE, TRY_LOCK, UNLOCK, WRITER_SETTINGS } from './pg-sql.js';
import { z } from 'zod';

const AppendResultRow = z.object({ leased: z.number().int(), inserted: z.number().int() });

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

  private async appendNow(records: readonly ChatRecord[], options: AppendOptions): Promise<void> {
    if (this.released) throw new Error(`internal: append to ${this.ref.location} after its lease was released`);
    if (this.lost) throw this.lost;
    if (records.length === 0) return;
    const rows = this.rowsFor(records);
    const batch = batchParams(rows);
    const params = [
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
    const what = rows.length === 1 ? `record ${rows[0]!.seq}` : `records ${rows[0]!.seq}-${rows.at(-1)!.seq}`;
    for (let attempt = 0; ; attempt++) {
      const client = this.client ?? (await this.reconnect());
      try {
        await this.commitMode(client, options.durable);
        const result = AppendResultRow.parse((await client.query(APPEND, params)).rows[0]);
        if (result.leased === 0) throw await this.loseLease(client, 'its epoch is no longer current (another writer took the session over)');
        if (result.inserted < rows.length) await this.confirmRetried(client, rows);
        this.nextSeq += rows.length;
        return;
      } catch (error) {
        if (error instanceof MendError) throw error;
        if (!isConnectionError(error) || attempt >= this.db.tuning.reconnectAttempts) throw writeError(this.db.target, error, `appending ${what}`);
        await this.dropClient();
      }
    }
  }

  /**
   * A durable append commits synchronously (on the server's disk when the append
   * resolves), like the JSONL store's fsync. A non-durable one commits
   * asynchronously: visible at once, flushed moments later. WAL is flushed in
   * order, so the next durable commit also makes every earlier record durable,
   * the same ordering guarantee an fsync gives a file. The setting is only sent
   * when it changes.
   */
  private async commitMode(client: pg.Client, durable: boolean): Promise<void> {
    const wanted = durable ? 'on' : 'off';
    if (this.synchronousCommit === wanted) return;
    await client.query(`SET synchronous_commit = ${wanted}`);
    this.synchronousCommit = wanted;
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
        this.client = client;
        this.synchronousCommit = 'on';
        return client;
      } catch (error) {
        if (error instanceof MendError) throw error;
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
