/**
 * A new session log written whole (a fork's): its lines go to a temporary file in the
 * log's own folder, which is fsynced, renamed to the log's name, and the folder fsynced.
 * A power cut leaves no log or the complete one, never one with a hole in its middle,
 * and no reader ever sees part of it.
 *
 * The temporary name starts with '.' and does not end in `.jsonl`, so listings,
 * `--continue` and resume by path never take it for a session: a cut before the rename
 * leaves a stray hidden file, never a session.
 *
 * Rename, not link: the caller holds the session's lock, which keeps every other mend
 * writer from creating the log meanwhile, and rename works on file systems without hard
 * links and leaves no second name behind after a crash.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MendError } from '../errors.js';
import { writeFailed } from './log-writer.js';
import { ensurePrivateParentDir, type PrivateDirFs } from './private-dirs.js';
import { validateChatRecord } from './record-validation.js';
import type { ChatRecord } from './records.js';

/** The file-system calls made; tests may wrap the real ones to make one fail. */
export type LogCreateFs = PrivateDirFs & Pick<typeof fs, 'lstatSync' | 'writeSync' | 'fchmodSync' | 'renameSync' | 'unlinkSync'>;

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_DIRECTORY } = fs.constants;
/** Lines are written in pieces of about this size: a large fork is never one more copy of itself in memory. */
const CHUNK = 1 << 20;

/** The hidden temporary name a log is written under before it is renamed into place. */
export function tempLogPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
}

export function createLogWhole(path: string, records: readonly ChatRecord[], io: LogCreateFs = fs): void {
  const lines = records.map((record) => lineOf(path, record));
  // Anything under the name, a dangling symlink too: a new log never replaces an entry.
  if (io.lstatSync(path, { throwIfNoEntry: false }) !== undefined) {
    throw new MendError('session_exists', `Session log already exists: ${path}`, { path });
  }
  ensurePrivateParentDir(path, io);
  const temp = tempLogPath(path);
  let fd = -1;
  let op = 'create';
  try {
    fd = io.openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    io.fchmodSync(fd, 0o600);
    op = 'write';
    for (let i = 0; i < lines.length;) {
      const piece: Buffer[] = [];
      let size = 0;
      while (i < lines.length && (size === 0 || size + lines[i]!.length <= CHUNK)) {
        size += lines[i]!.length;
        piece.push(lines[i++]!);
      }
      writeAll(io, fd, piece.length === 1 ? piece[0]! : Buffer.concat(piece, size));
    }
    op = 'fsync';
    io.fsyncSync(fd);
    op = 'close';
    const closing = fd;
    fd = -1;
    io.closeSync(closing);
    op = 'rename';
    io.renameSync(temp, path);
  } catch (error) {
    if (fd >= 0) ignore(() => io.closeSync(fd));
    ignore(() => io.unlinkSync(temp));
    throw writeFailed(path, op, error);
  }
  try {
    syncDir(dirname(path), io);
  } catch (error) {
    // Its name may not survive a power cut: the log was not created (nothing was acknowledged).
    ignore(() => io.unlinkSync(path));
    throw writeFailed(path, 'fsync the folder of', error);
  }
}

function lineOf(path: string, record: ChatRecord): Buffer {
  const check = validateChatRecord(record);
  if (!check.ok) throw new MendError('internal', `Refusing to write an invalid record: ${check.reason}`, { path, reason: check.reason });
  return Buffer.from(JSON.stringify(record) + '\n', 'utf8');
}

function writeAll(io: LogCreateFs, fd: number, data: Buffer): void {
  for (let offset = 0; offset < data.length;) {
    const n = io.writeSync(fd, data, offset, data.length - offset);
    if (n <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
    offset += n;
  }
}

/** The rename is durable once the folder is: a folder fsync some file systems refuse is tolerated, a failing one is not. */
function syncDir(dir: string, io: LogCreateFs): void {
  const fd = io.openSync(dir, O_RDONLY | O_DIRECTORY);
  try {
    io.fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EBADF') throw error;
  } finally {
    io.closeSync(fd);
  }
}

function ignore(action: () => void): void {
  try {
    action();
  } catch {
    // Cleanup after a failure: the first error is the one reported.
  }
}
