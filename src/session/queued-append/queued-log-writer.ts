/**
 * The session log writer of a process that serves many sessions at once: the same
 * append-only log and the same rules as SessionWriter (one write of one complete line
 * per record, a torn tail ended before the next append, a failed append cut off again,
 * a new file's folder fsynced once), but every write and fsync runs on libuv's thread
 * pool, so the event loop keeps serving other sessions while a disk flushes.
 *
 * Acknowledgement is unchanged: the promise of a durable append resolves only after the
 * fsync that covers its line returned, and a failed fsync rejects (and cuts off) every
 * line it covered. Appends run in call order, one batch at a time: what arrives while a
 * batch is on disk is written as the next batch and made durable by ONE fsync (group
 * commit). A non-durable append resolves once its line is written, as before, unless a
 * durable one precedes it in its batch: then it waits for that batch's fsync too (a
 * failed fsync may only take back lines that were not acknowledged).
 *
 * SessionWriter is the oracle: appended one at a time, both leave the same bytes and
 * give the same outcomes, fault hooks included (test/session/queued-log-writer.test.ts).
 */
import { dirname } from 'node:path';
import { MendError } from '../../errors.js';
import {
  encodeRecord,
  injectedWriteFailure,
  openLogFile,
  writeFailed,
  type AppendOptions,
  type WriteFaultHook,
  type WriterOpenOptions,
} from '../log-writer.js';
import type { ChatRecord } from '../records.js';
import { closeFd, fstatSize, fsyncFd, ftruncateFd, readAt, syncDirBestEffortAsync, writeFd } from './async-fs.js';

interface Pending {
  data: Buffer;
  durable: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const NEWLINE = Buffer.from('\n');

export class QueuedLogWriter {
  private fd: number;
  private closed = false;
  private appends = 0;
  private syncs = 0;
  private readonly queue: Pending[] = [];
  private draining = false;
  private idleWaiters: Array<() => void> = [];
  /** Whether the last byte must be checked for a torn line before the next append. */
  private checkTail: boolean;
  /** A new file's directory entry needs one fsync of the folder to survive power loss. */
  private syncDirPending: boolean;
  /** The log's size as this writer last left it (null: ask the file). */
  private size: number | null = null;
  /** The new log's folder sync, started with the first batch (best effort: never rejects). */
  private dirSync: Promise<void> | undefined;

  private constructor(
    readonly path: string,
    fd: number,
    created: boolean,
    private readonly hook: WriteFaultHook | undefined,
  ) {
    this.fd = fd;
    this.checkTail = !created;
    this.syncDirPending = created;
    // O_EXCL made it: empty, so the first write need not ask the file its size.
    if (created) this.size = 0;
  }

  /** Opens (or creates) the log now, synchronously, with SessionWriter's checks and errors. */
  static open(path: string, options: Omit<WriterOpenOptions, 'fs'>): QueuedLogWriter {
    return new QueuedLogWriter(path, openLogFile(path, options.create), options.create, options.faultHook);
  }

  /** Number of records appended (and, for durable ones, synced) through this writer. */
  get recordCount(): number {
    return this.appends;
  }

  /** Number of fsyncs of the log so far: fewer than durable appends when batches formed. */
  get syncCount(): number {
    return this.syncs;
  }

  /** Resolves once the record is written, and for a durable append once it is fsynced. */
  append(record: ChatRecord, options: AppendOptions = {}): Promise<void> {
    if (this.closed) return Promise.reject(new MendError('internal', `Session writer for ${this.path} is closed`));
    let data: Buffer;
    try {
      data = encodeRecord(record, this.path);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ data, durable: options.durable === true, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        void this.drain();
      }
    });
  }

  /** Waits for every queued append, then closes the log. Nothing may be appended afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.idle();
    const fd = this.fd;
    this.fd = -1;
    try {
      await closeFd(fd);
    } catch (error) {
      throw writeFailed(this.path, 'close', error);
    }
  }

  private idle(): Promise<void> {
    if (!this.draining) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.commit(this.queue.splice(0));
    } finally {
      this.draining = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** One batch: each line written in order, then one fsync for those that wait for it. */
  private async commit(batch: Pending[]): Promise<void> {
    // A new log's folder entry (made when the file was opened) is synced while the batch is
    // written and synced, not after: both must be done before anything is acknowledged,
    // in either order, and on a busy loop each step after the other costs a turn of it.
    if (this.syncDirPending && this.dirSync === undefined) this.dirSync = syncDirBestEffortAsync(dirname(this.path));
    /** Written lines that wait for this batch's fsync, and the log's size before the first of them. */
    const waiting: Pending[] = [];
    let groupStart = -1;
    for (const entry of batch) {
      const index = this.appends + waiting.length;
      let data = entry.data;
      if (this.hook?.beforeWrite) {
        let replaced: ReturnType<NonNullable<WriteFaultHook['beforeWrite']>>;
        try {
          replaced = this.hook.beforeWrite(index, data);
        } catch (error) {
          entry.reject(error);
          continue;
        }
        if (replaced && !Buffer.isBuffer(replaced)) {
          entry.reject(injectedWriteFailure(this.path, index, replaced.fail));
          continue;
        }
        if (replaced) data = replaced;
      }
      let before = -1;
      try {
        if (this.checkTail) await this.terminateTornTail();
        before = this.size ?? (await fstatSize(this.fd));
        await this.writeAll(data);
        this.size = before + data.length;
      } catch (error) {
        // A failed write (disk full, I/O error) may have left part of a line behind: cut it off.
        await this.undo(before);
        entry.reject(writeFailed(this.path, 'write', error));
        continue;
      }
      if (entry.durable || waiting.length > 0) {
        if (waiting.length === 0) groupStart = before;
        waiting.push(entry);
      } else {
        this.acknowledge(entry);
      }
    }
    if (waiting.length === 0) return;
    try {
      await this.sync(this.appends, waiting.length);
    } catch (error) {
      // Not durable, so never acknowledged: the lines must not stay behind as if they were written.
      await this.undo(groupStart);
      for (const entry of waiting) entry.reject(error);
      return;
    }
    for (const entry of waiting) this.acknowledge(entry);
  }

  private acknowledge(entry: Pending): void {
    const index = this.appends++;
    try {
      this.hook?.afterWrite?.(index);
    } catch (error) {
      entry.reject(error);
      return;
    }
    entry.resolve();
  }

  /** Takes back what failed: the file is cut to its size before it (see SessionWriter.undo). */
  private async undo(before: number): Promise<void> {
    this.size = null;
    this.checkTail = true;
    if (before < 0) return;
    try {
      await ftruncateFd(this.fd, before);
      this.size = before;
      this.checkTail = false;
    } catch {
      // Left to the torn-tail check.
    }
  }

  /** A crash can leave a last line without its '\n': one '\n' first keeps our record off it. */
  private async terminateTornTail(): Promise<void> {
    const size = await fstatSize(this.fd);
    if (size > 0) {
      const last = Buffer.alloc(1);
      const n = await readAt(this.fd, last, size - 1);
      if (n === 1 && last[0] !== 0x0a) await this.writeAll(NEWLINE);
    }
    this.size = null;
    this.checkTail = false;
  }

  private async writeAll(data: Buffer): Promise<void> {
    let offset = 0;
    while (offset < data.length) {
      const n = await writeFd(this.fd, data, offset, data.length - offset);
      if (n <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
      offset += n;
    }
  }

  /** One fsync for the `count` lines from record `first` on; the fault hook is asked for each of them. */
  private async sync(first: number, count: number): Promise<void> {
    try {
      for (let index = first; index < first + count; index++) {
        const injected = this.hook?.beforeSync?.(index);
        if (injected) throw Object.assign(new Error(`injected fsync failure (${injected.fail})`), { code: injected.fail });
      }
      await fsyncFd(this.fd);
      this.syncs++;
    } catch (error) {
      throw writeFailed(this.path, 'fsync', error);
    }
    if (this.syncDirPending) {
      await (this.dirSync ??= syncDirBestEffortAsync(dirname(this.path)));
      this.syncDirPending = false;
    }
  }
}
