/**
 * Single-writer lock per session: `<log>.lock` next to the log, created with
 * O_EXCL and holding `{pid, startTime}`. Neither peer locks in headless mode,
 * so two resumes of one session silently write two interleaved branches; we
 * refuse the second writer instead. Reading and planning take no lock.
 *
 * Staleness: a lock whose pid is dead (or a zombie), or alive but started at a
 * different time (the pid was reused), is taken over at once. The start time
 * is field 22 of /proc/<pid>/stat; where /proc is unavailable only liveness is
 * checked.
 *
 * Decisions worth knowing:
 * - A symlink (or anything but a regular file) at the lock path is refused as
 *   `session_locked` and left alone: following it could clobber or delete a
 *   file elsewhere, and deleting it could break someone's deliberate setup.
 * - An empty or unparsable lock is what a writer killed between O_EXCL and its
 *   write leaves behind, but it is also what a live writer looks like for the
 *   microseconds in between. So it counts as stale only once older than
 *   `unreadableStaleMs` (2 s); younger, it is treated as held.
 * - Takeover re-checks, right before unlinking, that the path still names the
 *   file that was judged stale (same inode, mtime and content), so a lock that
 *   a racing process just took over is not deleted; release() checks the same
 *   way. What remains is a window of a few syscalls between check and unlink.
 */
import * as fs from 'node:fs';
import { MendError } from '../errors.js';
import { ensurePrivateParentDir } from './private-dirs.js';

export interface LockOwner {
  pid: number;
  /** From processStartTime(pid); null where it cannot be read. */
  startTime: string | null;
  /** Host name of the owner, reported as the session's activeWriter (optional in older locks). */
  host?: string;
  /** ISO time the lock was taken (optional in older locks). */
  since?: string;
}

export interface AcquireOptions extends LockOwner {
  /** Clock for the age of an unreadable lock file. */
  now?: () => number;
  unreadableStaleMs?: number;
  maxAttempts?: number;
}

export interface SessionLock {
  readonly path: string;
  /** Whether the lock path still names the very file this lock created (not removed, not replaced by another writer's). */
  stillHeld(): boolean;
  release(): void;
}

const { O_CREAT, O_EXCL, O_WRONLY, O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const MAX_LOCK_BYTES = 4096;

export function lockPathFor(logPath: string): string {
  return `${logPath}.lock`;
}

interface ProcStat {
  state: string;
  startTime: string;
}

/** Parses /proc/<pid>/stat. The command name (field 2) may contain spaces and ')', so fields are counted from the last ')'. */
function readProcStat(pid: number): ProcStat | null {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  // fields[0] is field 3 (state), so field 22 (starttime) is fields[19].
  const fields = text.slice(close + 2).split(' ');
  const state = fields[0];
  const startTime = fields[19];
  if (!state || !startTime || !/^\d+$/.test(startTime)) return null;
  return { state, startTime };
}

/** Process start time in clock ticks since boot (/proc/<pid>/stat field 22), or null when the process does not exist. */
export function processStartTime(pid: number): string | null {
  return readProcStat(pid)?.startTime ?? null;
}

function isProcessAlive(pid: number): boolean {
  const stat = readProcStat(pid);
  if (stat) return stat.state !== 'Z' && stat.state !== 'X';
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

type Verdict = { kind: 'stale'; ident: FileIdent } | { kind: 'held'; pid: number | null; owner?: LockOwner; why: string } | { kind: 'gone' };

/**
 * Which lock file this is. Inode numbers are reused at once after an unlink, so
 * dev+ino alone cannot tell a lock from its replacement; the content (it names
 * the owner's pid) and the nanosecond mtime can.
 */
interface FileIdent {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  /** The change time: any write, chmod or rename of the file moves it, and nothing sets it back. */
  ctimeNs: bigint;
  text: string;
}

type LockFile = { kind: 'gone' } | { kind: 'symlink' } | { kind: 'not_regular' } | { kind: 'file'; ident: FileIdent };

/** Reads the lock without following a symlink and without blocking on a FIFO. */
function readLockFile(lockPath: string): LockFile {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'gone' };
    if (code === 'ELOOP' || code === 'EMLINK') return { kind: 'symlink' };
    throw lockFailed(lockPath, error);
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile()) return { kind: 'not_regular' };
    const buf = Buffer.alloc(MAX_LOCK_BYTES);
    const n = fs.readSync(fd, buf, 0, MAX_LOCK_BYTES, 0);
    return { kind: 'file', ident: { dev: st.dev, ino: st.ino, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, text: buf.toString('utf8', 0, n) } };
  } finally {
    fs.closeSync(fd);
  }
}

function sameFile(a: FileIdent, b: FileIdent): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.text === b.text;
}

function parseOwner(text: string): LockOwner | null {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null) return null;
    const { pid, startTime, host, since } = value as Record<string, unknown>;
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return null;
    if (startTime !== null && startTime !== undefined && typeof startTime !== 'string') return null;
    return {
      pid,
      startTime: startTime ?? null,
      ...(typeof host === 'string' ? { host } : {}),
      ...(typeof since === 'string' ? { since } : {}),
    };
  } catch {
    return null;
  }
}

function inspect(lockPath: string, now: number, unreadableStaleMs: number): Verdict {
  const file = readLockFile(lockPath);
  if (file.kind === 'gone') return file;
  if (file.kind === 'symlink') return { kind: 'held', pid: null, why: 'the lock path is a symlink; refusing to follow or remove it' };
  if (file.kind === 'not_regular') return { kind: 'held', pid: null, why: 'the lock path is not a regular file' };
  const { ident } = file;
  const owner = parseOwner(ident.text);
  if (owner === null) {
    const ageMs = now - Number(ident.mtimeNs / 1_000_000n);
    return ageMs > unreadableStaleMs ? { kind: 'stale', ident } : { kind: 'held', pid: null, why: 'the lock file is being written by another process' };
  }
  if (!isProcessAlive(owner.pid)) return { kind: 'stale', ident };
  const current = processStartTime(owner.pid);
  if (owner.startTime !== null && current !== null && owner.startTime !== current) return { kind: 'stale', ident };
  return { kind: 'held', pid: owner.pid, owner, why: 'its owner is alive' };
}

/** Unlinks the lock only if the path still names the very file that was judged (or created) before. */
function removeIfSame(lockPath: string, ident: FileIdent): void {
  const file = readLockFile(lockPath);
  if (file.kind !== 'file' || !sameFile(file.ident, ident)) return;
  try {
    fs.unlinkSync(lockPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw lockFailed(lockPath, error);
  }
}

function tryCreate(lockPath: string, owner: LockOwner): FileIdent | null {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw lockFailed(lockPath, error);
  }
  let ident: FileIdent | null = null;
  try {
    fs.fchmodSync(fd, 0o600);
    const text = JSON.stringify({
      pid: owner.pid,
      startTime: owner.startTime,
      ...(owner.host !== undefined ? { host: owner.host } : {}),
      ...(owner.since !== undefined ? { since: owner.since } : {}),
    });
    fs.writeSync(fd, text);
    const st = fs.fstatSync(fd, { bigint: true });
    ident = { dev: st.dev, ino: st.ino, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, text };
    return ident;
  } catch (error) {
    throw lockFailed(lockPath, error);
  } finally {
    fs.closeSync(fd);
    // Created by us with O_EXCL, so removing a half-written one cannot hit another's lock.
    if (ident === null) fs.rmSync(lockPath, { force: true });
  }
}

export function acquireSessionLock(logPath: string, options: AcquireOptions): SessionLock {
  const lockPath = lockPathFor(logPath);
  const now = options.now ?? Date.now;
  const unreadableStaleMs = options.unreadableStaleMs ?? 2000;
  const maxAttempts = options.maxAttempts ?? 5;
  const owner: LockOwner = {
    pid: options.pid,
    startTime: options.startTime,
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.since !== undefined ? { since: options.since } : {}),
  };
  try {
    ensurePrivateParentDir(lockPath);
  } catch (error) {
    throw lockFailed(lockPath, error);
  }

  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const ident = tryCreate(lockPath, owner);
    if (ident) return heldLock(lockPath, ident);
    const verdict = inspect(lockPath, now(), unreadableStaleMs);
    if (verdict.kind === 'held') {
      const message =
        verdict.pid === null
          ? `Session log ${logPath} is locked (${verdict.why}). Lock file: ${lockPath}`
          : `Session log ${logPath} is in use by another mend process (pid ${verdict.pid}). Lock file: ${lockPath}`;
      throw new MendError('session_locked', message, {
        pid: verdict.pid,
        lockPath,
        ...(verdict.owner?.host !== undefined ? { host: verdict.owner.host } : {}),
        ...(verdict.owner?.since !== undefined ? { since: verdict.owner.since } : {}),
      });
    }
    if (verdict.kind === 'stale') removeIfSame(lockPath, verdict.ident);
  }
  throw new MendError('session_locked', `Could not take the lock ${lockPath} after ${maxAttempts} attempts (other processes keep racing for it)`, {
    pid: null,
    lockPath,
  });
}

function heldLock(lockPath: string, ident: FileIdent): SessionLock {
  let released = false;
  return {
    path: lockPath,
    stillHeld(): boolean {
      if (released) return false;
      // Asked before every append: one lstat answers while the file is untouched since we
      // wrote it (same device, inode, size and change time: a new file in its place, a
      // write or a chmod would move one of them); anything else is read and compared whole.
      const st = fs.lstatSync(lockPath, { bigint: true, throwIfNoEntry: false });
      if (st === undefined) return false;
      if (st.isFile() && st.dev === ident.dev && st.ino === ident.ino && st.ctimeNs === ident.ctimeNs && st.size === BigInt(Buffer.byteLength(ident.text)))
        return true;
      const file = readLockFile(lockPath);
      return file.kind === 'file' && sameFile(file.ident, ident);
    },
    release(): void {
      if (released) return;
      released = true;
      // If our lock was judged stale and replaced, the file there is not ours to delete.
      removeIfSame(lockPath, ident);
    },
  };
}

function lockFailed(lockPath: string, error: unknown): MendError {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  return new MendError(
    'session_write_failed',
    `Could not use the session lock ${lockPath}: ${(error as Error | undefined)?.message ?? String(error)}`,
    { path: lockPath, errno },
    { cause: error },
  );
}

/**
 * The live owner of a session's lock, or null when nobody holds it (no lock, or
 * a stale one). Reads only: a stale lock is left for the next writer to take over.
 */
export function lockHolder(logPath: string, now: number = Date.now()): LockOwner | null {
  const verdict = inspect(lockPathFor(logPath), now, 2000);
  return verdict.kind === 'held' && verdict.owner ? verdict.owner : null;
}
