/**
 * Append-only writer for one session log. Every record is one write of one
 * complete line to an O_APPEND descriptor, so a crash can at worst leave one
 * torn last line, never a damaged earlier one. No byte is ever rewritten.
 *
 * Synchronous on purpose: when append() returns, the line is in the kernel, so
 * a signal handler or crash that runs next cannot overtake a pending write. A
 * process that serves many sessions at once (the daemon) appends through the
 * queued writer instead (src/session/queued-append), which keeps these rules but
 * does its write and fsync off the event loop; this writer is its oracle.
 */
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { MendError } from '../errors.js';
import { ensurePrivateParentDir, syncDirBestEffort } from './private-dirs.js';
import type { ChatRecord } from './records.js';
import { validateChatRecord } from './record-validation.js';

/** Crash-injection seam for tests. `index` is the 0-based number of the append. */
export interface WriteFaultHook {
  /** Return replacement bytes to write instead (e.g. a torn prefix), or `{fail: errno}` to fail the write. */
  beforeWrite?(index: number, data: Buffer): Buffer | { fail: string } | void;
  /** Called once the append is complete (after the fsync of a durable append). */
  afterWrite?(index: number): void;
  /** Return `{fail: errno}` to make the fsync of a durable append fail (after its line was written). */
  beforeSync?(index: number): { fail: string } | void;
}

/** The file-system calls the writer makes; tests may wrap the real ones to observe them. */
export type WriterFs = Pick<
  typeof fs,
  'openSync' | 'writeSync' | 'fsyncSync' | 'closeSync' | 'fstatSync' | 'readSync' | 'fchmodSync' | 'mkdirSync' | 'chmodSync' | 'statSync'
>;

export interface WriterOpenOptions {
  /** true: start a new log (the file must not exist yet); false: append to an existing log. */
  create: boolean;
  faultHook?: WriteFaultHook;
  fs?: WriterFs;
}

export interface AppendOptions {
  /** fsync after the write; use for records a crash must not lose. */
  durable?: boolean;
}

const { O_RDWR, O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
const NEWLINE = Buffer.from('\n');

export class SessionWriter {
  private fd: number;
  private appends = 0;
  /** Whether the last byte must be checked for a torn line before the next append. */
  private checkTail: boolean;
  /** A new file's directory entry needs one fsync of the folder to survive power loss. */
  private syncDirPending: boolean;

  private constructor(
    readonly path: string,
    fd: number,
    created: boolean,
    private readonly io: WriterFs,
    private readonly hook: WriteFaultHook | undefined,
  ) {
    this.fd = fd;
    this.checkTail = !created;
    this.syncDirPending = created;
  }

  static open(path: string, options: WriterOpenOptions): SessionWriter {
    const io = options.fs ?? fs;
    return new SessionWriter(path, openLogFile(path, options.create, io), options.create, io, options.faultHook);
  }

  /** Number of records appended through this writer. */
  get recordCount(): number {
    return this.appends;
  }

  append(record: ChatRecord, options: AppendOptions = {}): void {
    if (this.fd < 0) throw new MendError('internal', `Session writer for ${this.path} is closed`);
    let data = encodeRecord(record, this.path);

    const index = this.appends;
    if (this.hook?.beforeWrite) {
      const replaced = this.hook.beforeWrite(index, data);
      if (replaced && !Buffer.isBuffer(replaced)) throw injectedWriteFailure(this.path, index, replaced.fail);
      if (replaced) data = replaced;
    }

    let before = -1;
    try {
      if (this.checkTail) this.terminateTornTail();
      before = this.size ?? this.io.fstatSync(this.fd).size;
      this.writeAll(data);
      this.size = before + data.length;
    } catch (error) {
      // A failed write (disk full, I/O error) may have left part of a line behind: cut it off.
      this.undo(before);
      throw writeFailed(this.path, 'write', error);
    }
    if (options.durable) {
      try {
        this.sync(index);
      } catch (error) {
        // Not durable, so never acknowledged: the line must not stay behind as if it were written.
        this.undo(before);
        throw error;
      }
    }
    this.appends++;
    this.hook?.afterWrite?.(index);
  }

  /** The log's size as this writer last left it (null: ask the file). */
  private size: number | null = null;

  /**
   * Takes back an append that failed: the file is cut to its size before it, so no
   * unterminated line (or an unacknowledged complete one) is left for the next writer.
   * When even that fails, the next append (or writer) ends the torn line first.
   */
  private undo(before: number): void {
    this.size = null;
    this.checkTail = true;
    if (before < 0) return;
    try {
      fs.ftruncateSync(this.fd, before);
      this.size = before;
      this.checkTail = false;
    } catch {
      // Left to the torn-tail check.
    }
  }

  close(): void {
    if (this.fd < 0) return;
    const fd = this.fd;
    this.fd = -1;
    try {
      this.io.closeSync(fd);
    } catch (error) {
      throw writeFailed(this.path, 'close', error);
    }
  }

  /**
   * A crash can leave a last line without its '\n'. Appending straight after it
   * would glue our record onto the torn bytes and lose it; one '\n' first turns
   * the torn bytes into a malformed line of their own.
   */
  private terminateTornTail(): void {
    const size = this.io.fstatSync(this.fd).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      const n = this.io.readSync(this.fd, last, 0, 1, size - 1);
      if (n === 1 && last[0] !== 0x0a) this.writeAll(NEWLINE);
    }
    this.size = null;
    this.checkTail = false;
  }

  private writeAll(data: Buffer): void {
    let offset = 0;
    while (offset < data.length) {
      const n = this.io.writeSync(this.fd, data, offset, data.length - offset);
      if (n <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
      offset += n;
    }
  }

  private sync(index: number): void {
    try {
      const injected = this.hook?.beforeSync?.(index);
      if (injected) throw Object.assign(new Error(`injected fsync failure (${injected.fail})`), { code: injected.fail });
      this.io.fsyncSync(this.fd);
    } catch (error) {
      throw writeFailed(this.path, 'fsync', error);
    }
    if (this.syncDirPending) {
      this.syncDirPending = false;
      this.syncParentDir();
    }
  }

  /** Best effort: some file systems refuse fsync on a folder, and the record itself is already synced. */
  private syncParentDir(): void {
    syncDirBestEffort(dirname(this.path), this.io);
  }
}

/**
 * Opens a session log for appending (read+append: reading is only used for the torn-tail
 * check; every write appends): a new one with O_EXCL, mode 0600 in private folders, an
 * existing one never through a symlink.
 */
export function openLogFile(path: string, create: boolean, io: WriterFs = fs): number {
  try {
    if (create) {
      ensurePrivateParentDir(path, io);
      const fd = io.openSync(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL, 0o600);
      io.fchmodSync(fd, 0o600);
      return fd;
    }
    // Never through a symlink: the lock belongs to the real file, and records must not land
    // in whatever file a link points to (with its own, maybe readable, mode).
    return io.openSync(path, O_RDWR | O_APPEND | O_NOFOLLOW);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'EEXIST') throw new MendError('session_exists', `Session log already exists: ${path}`, { path }, { cause: error });
    if (code === 'ELOOP' || code === 'EMLINK') {
      throw new MendError(
        'session_write_failed',
        `Refusing to append to ${path}: it is a symbolic link (resume the real file instead)`,
        { path },
        { cause: error },
      );
    }
    if (code === 'ENOENT' && !create) {
      throw new MendError('session_not_found', `Session log not found: ${path}`, { path }, { cause: error });
    }
    throw writeFailed(path, 'open', error);
  }
}

/** A record as the one line it is stored as; an invalid or unserializable record is refused. */
export function encodeRecord(record: ChatRecord, path: string): Buffer {
  const check = validateChatRecord(record);
  if (!check.ok) {
    throw new MendError('internal', `Refusing to write an invalid record: ${check.reason}`, { path, reason: check.reason });
  }
  try {
    return Buffer.from(JSON.stringify(record) + '\n', 'utf8');
  } catch (error) {
    throw new MendError('internal', `Record cannot be serialized: ${(error as Error).message}`, { path }, { cause: error });
  }
}

export function injectedWriteFailure(path: string, index: number, errno: string): MendError {
  return new MendError(codeForErrno(errno), `Injected write failure (${errno}) for record ${index + 1} of this writer`, {
    path,
    errno,
    injected: true,
  });
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The storage itself failed (full, read-only, broken): `store_unavailable`, which stops
 * the turn with exit 4 on every front end. Anything else is a failure of this log.
 */
const STORAGE_ERRNOS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS']);

function codeForErrno(errno: string | undefined): 'store_unavailable' | 'session_write_failed' {
  return errno !== undefined && STORAGE_ERRNOS.has(errno) ? 'store_unavailable' : 'session_write_failed';
}

export function writeFailed(path: string, op: string, error: unknown): MendError {
  const errno = errnoOf(error);
  return new MendError(
    codeForErrno(errno),
    `Could not ${op} session log ${path}: ${(error as Error | undefined)?.message ?? String(error)}`,
    { path, errno },
    { cause: error },
  );
}
