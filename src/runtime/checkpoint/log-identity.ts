/**
 * Which bytes a checkpoint describes: the log's first `bytes` bytes, identified by the
 * file (device, inode), its length, a hash of its head and a hash of its last bytes up
 * to the end (the window included), and, when the file was exactly that long when the
 * checkpoint was made, its modification and change times.
 *
 * A log that is the same length must have the same times (a file rewritten in place
 * without growing is never taken for the same one); a longer one must still hold the
 * same head and end bytes (an append changes neither). What this cannot see: an edit
 * strictly inside a long prefix (past the head, before the last 64 KiB) of a file that
 * then also grew, between two reads. Every other change (replaced, truncated, edited in
 * the hashed parts, restored from a backup, rewritten by another writer) is a mismatch.
 */
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';

const HEAD_BYTES = 256 * 1024;
const TAIL_BYTES = 64 * 1024;

export interface LogIdentity {
  dev: string;
  ino: string;
  bytes: number;
  /** Nanoseconds, when the file had exactly `bytes` bytes when identified; else null. */
  mtimeNs: string | null;
  ctimeNs: string | null;
  headHash: string;
  /** Where the end hash starts (at the window or before it). */
  tailStart: number;
  tailHash: string;
}

function sha1(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('hex');
}

async function readAt(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const out = Buffer.allocUnsafe(Math.max(0, end - start));
  let done = 0;
  while (done < out.length) {
    const { bytesRead } = await handle.read(out, done, out.length - done, start + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === out.length ? out : out.subarray(0, done);
}

/** The log as a checkpoint of its first `bytes` bytes with a window at `windowStart` names it, and those window bytes. */
export async function identifyLog(path: string, bytes: number, windowStart: number): Promise<{ identity: LogIdentity; window: Buffer } | null> {
  const handle = await open(path, 'r');
  try {
    const stat = await handle.stat({ bigint: true });
    if (stat.size < BigInt(bytes)) return null;
    const head = await readAt(handle, 0, Math.min(bytes, HEAD_BYTES));
    const tailStart = Math.min(windowStart, Math.max(0, bytes - TAIL_BYTES));
    const tail = await readAt(handle, tailStart, bytes);
    if (tail.length !== bytes - tailStart) return null;
    const exact = stat.size === BigInt(bytes);
    const identity: LogIdentity = {
      dev: stat.dev.toString(),
      ino: stat.ino.toString(),
      bytes,
      mtimeNs: exact ? stat.mtimeNs.toString() : null,
      ctimeNs: exact ? stat.ctimeNs.toString() : null,
      headHash: sha1(head),
      tailStart,
      tailHash: sha1(tail),
    };
    return { identity, window: tail.subarray(windowStart - tailStart) };
  } finally {
    await handle.close();
  }
}

/** Bytes of the log from the start of line `line` (1-based) to `end`, found by reading back from `end`. */
export async function bytesFromLine(path: string, end: number, newlines: number, line: number): Promise<{ start: number; bytes: Buffer } | null> {
  const handle = await open(path, 'r');
  try {
    // The newline that ends line `line - 1` is number `newlines - line + 2` counted from the end.
    let wanted = newlines - line + 2;
    let start = line <= 1 ? 0 : -1;
    const block = 64 * 1024;
    for (let at = end; start < 0 && at > 0;) {
      const from = Math.max(0, at - block);
      const chunk = await readAt(handle, from, at);
      for (let i = chunk.length - 1; i >= 0; i--) {
        if (chunk[i] === 0x0a && --wanted === 0) {
          start = from + i + 1;
          break;
        }
      }
      at = from;
    }
    if (start < 0) return null;
    return { start, bytes: await readAt(handle, start, end) };
  } finally {
    await handle.close();
  }
}

/** The offset in `bytes` where its line `line` (1-based) starts, or -1. */
export function lineOffset(bytes: Buffer, line: number): number {
  let at = 0;
  for (let n = 1; n < line; n++) {
    const next = bytes.indexOf(0x0a, at);
    if (next < 0) return -1;
    at = next + 1;
  }
  return at;
}

export type OpenedLog = { grown: boolean; size: number; bytes: Buffer } | { mismatch: string };

/**
 * The log if it still starts with the bytes the identity describes: its bytes from
 * `identity.tailStart` to its current end; else why not.
 */
export async function openIdentified(path: string, identity: LogIdentity): Promise<OpenedLog> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    return { mismatch: `the log cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  try {
    const stat = await handle.stat({ bigint: true });
    if (stat.dev.toString() !== identity.dev || stat.ino.toString() !== identity.ino) return { mismatch: 'the log was replaced (another file now)' };
    const size = Number(stat.size);
    if (size < identity.bytes) return { mismatch: `the log was truncated (${size} < ${identity.bytes} bytes)` };
    if (size === identity.bytes && (identity.mtimeNs !== stat.mtimeNs.toString() || identity.ctimeNs !== stat.ctimeNs.toString())) {
      return { mismatch: 'the log was rewritten in place (same length, new times)' };
    }
    const head = await readAt(handle, 0, Math.min(identity.bytes, HEAD_BYTES));
    if (sha1(head) !== identity.headHash) return { mismatch: 'the head of the log changed' };
    const bytes = await readAt(handle, identity.tailStart, size);
    if (bytes.length < identity.bytes - identity.tailStart || sha1(bytes.subarray(0, identity.bytes - identity.tailStart)) !== identity.tailHash) {
      return { mismatch: 'the end of the prefix changed' };
    }
    return { grown: size > identity.bytes, size: identity.tailStart + bytes.length, bytes };
  } finally {
    await handle.close();
  }
}
