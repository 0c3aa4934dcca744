/**
 * The JSONL store's writer lease: the session's lock file plus an append-only
 * writer, opened on the first append so a failed run on a new session leaves no
 * log behind. Durable appends are fsynced before append's promise resolves: on the
 * calling thread (`sync`, the default), or on the thread pool (`queued`, the daemon).
 * A session created with records (a fork) gets its log whole: session/log-create.ts.
 */
import { existsSync, lstatSync, statSync, unlinkSync } from 'node:fs';
import { MendError, errorMessageOf } from '../../errors.js';
import type { ActiveWriter } from '../../session/active-writer.js';
import { createLogWhole } from '../../session/log-create.js';
import type { WriteFaultHook } from '../../session/log-writer.js';
import { openLogAppender, type AppendMode, type LogAppender } from '../../session/queued-append/log-appender.js';
import type { ChatRecord } from '../../session/records.js';
import type { SessionLock } from '../../session/session-lock.js';
import type { AppendOptions, SessionRef, WriterLease } from '../session-store.js';

export class JsonlLease implements WriterLease {
  private writer: LogAppender | null = null;
  private released = false;

  constructor(
    readonly ref: SessionRef,
    readonly holder: ActiveWriter,
    private readonly lock: SessionLock,
    private readonly faultHook: WriteFaultHook | undefined,
    private readonly appendMode: AppendMode = 'sync',
  ) {}

  private get path(): string {
    return this.ref.location;
  }

  /** Set once the lock file turned out not to be ours any more: every later append and check fails. */
  private lost: MendError | null = null;

  async verify(): Promise<void> {
    this.checkHeld();
  }

  /** Synchronous, so in `sync` mode an append still reaches the kernel before append() first yields. */
  private checkHeld(): void {
    if (this.released) throw new Error(`internal: lease of ${this.path} checked after it was released`);
    if (this.lost) throw this.lost;
    let held: boolean;
    try {
      held = this.lock.stillHeld();
    } catch (error) {
      throw new MendError(
        'store_unavailable',
        `Could not read the session lock ${this.lock.path}: ${errorMessageOf(error)}`,
        { path: this.lock.path },
        { cause: error },
      );
    }
    if (held) return;
    this.lost = new MendError(
      'session_lease_lost',
      `The lock of session log ${this.path} is no longer this writer's (pid ${this.holder.pid}): it was removed or another writer took the session over`,
      { path: this.path, lockPath: this.lock.path, pid: this.holder.pid },
    );
    throw this.lost;
  }

  async append(record: ChatRecord, options: AppendOptions): Promise<void> {
    if (this.released) throw new Error(`internal: append to ${this.path} after its lease was released`);
    // A writer whose lock was taken away must not write behind the new writer's back.
    this.checkHeld();
    const creating = this.writer === null && !existsSync(this.path);
    this.writer ??= openLogAppender(this.path, { create: creating, mode: this.appendMode, faultHook: this.faultHook });
    try {
      await this.writer.append(record, { durable: options.durable });
    } catch (error) {
      // A new session whose very first write failed (disk full) must not leave an empty
      // log behind: the same --session-id could never be used again.
      if (creating) await this.discardEmptyLog();
      throw error;
    }
  }

  async createWith(records: readonly ChatRecord[]): Promise<void> {
    if (this.released) throw new Error(`internal: create of ${this.path} after its lease was released`);
    this.checkHeld();
    if (this.writer !== null || lstatSync(this.path, { throwIfNoEntry: false }) !== undefined) {
      throw new MendError('session_exists', `session ${this.ref.sessionId} already exists (${this.path})`, { sessionId: this.ref.sessionId, path: this.path });
    }
    if (records.length === 0) throw new MendError('internal', `a session is created with at least one record (${this.path})`);
    const stranger = records.find((r) => r.sessionId !== this.ref.sessionId);
    if (stranger !== undefined) {
      throw new MendError('session_write_failed', `Refusing to write a record of session ${stranger.sessionId} into session ${this.ref.sessionId}`, {
        sessionId: this.ref.sessionId,
        path: this.path,
      });
    }
    createLogWhole(this.path, records);
  }

  private async discardEmptyLog(): Promise<void> {
    const writer = this.writer;
    this.writer = null;
    await writer?.close().catch(() => undefined);
    try {
      if (statSync(this.path).size === 0) unlinkSync(this.path);
    } catch {
      // Nothing to discard.
    }
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    try {
      await this.writer?.close();
    } finally {
      this.writer = null;
      this.lock.release();
    }
  }
}
