/**
 * The one way tools read a file. Only regular files are read: a FIFO would block the
 * turn forever and a device like /dev/zero never ends. The type is checked on the opened
 * descriptor (no check-then-open race), the open is non-blocking (so opening a FIFO with
 * no writer returns at once instead of hanging), and the read is bounded in bytes and
 * stops when the signal aborts.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { ToolErrorType, errorOutcome, type ToolOutcome } from './tool.js';

export const MAX_READ_BYTES = 20 * 1024 * 1024;
const CHUNK_BYTES = 256 * 1024;

export type SafeReadResult = { ok: true; bytes: Buffer } | { ok: false; outcome: ToolOutcome; reason: SafeReadFailure };
export type SafeReadFailure = 'not_found' | 'directory' | 'not_regular' | 'too_large' | 'aborted' | 'error';

export interface SafeReadOptions {
  signal: AbortSignal;
  maxBytes?: number;
}

export async function readRegularFile(path: string, options: SafeReadOptions): Promise<SafeReadResult> {
  const maxBytes = options.maxBytes ?? MAX_READ_BYTES;
  if (options.signal.aborted) return fail('aborted', `Read of ${path} was cancelled.`, ToolErrorType.aborted);
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return fail('not_found', `File not found: ${path}`, ToolErrorType.fileNotFound);
    if (code === 'EISDIR') return fail('directory', `Path is a directory, not a file: ${path}`, ToolErrorType.targetIsDirectory);
    return fail('error', `Failed to open ${path}: ${(error as Error).message}`, ToolErrorType.readFailure);
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return fail('directory', `Path is a directory, not a file: ${path}`, ToolErrorType.targetIsDirectory);
    if (!info.isFile()) {
      return fail('not_regular', `Not a regular file: ${path} (${fileKind(info)}); only regular files can be read.`, ToolErrorType.notRegularFile);
    }
    if (info.size > maxBytes) return tooLarge(path, `${info.size} bytes`, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    // Read until EOF rather than trusting the size: the file may have grown since fstat.
    for (;;) {
      if (options.signal.aborted) return fail('aborted', `Read of ${path} was cancelled.`, ToolErrorType.aborted);
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) return tooLarge(path, `over ${maxBytes} bytes`, maxBytes);
    }
    return { ok: true, bytes: Buffer.concat(chunks, total) };
  } catch (error) {
    return fail('error', `Failed to read ${path}: ${(error as Error).message}`, ToolErrorType.readFailure);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function fileKind(info: { isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (info.isFIFO()) return 'a FIFO';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSocket()) return 'a socket';
  return 'a special file';
}

function tooLarge(path: string, size: string, maxBytes: number): SafeReadResult {
  return fail('too_large', `File is too large to read (${size}; limit ${maxBytes}): ${path}`, ToolErrorType.fileTooLarge);
}

function fail(reason: SafeReadFailure, message: string, errorType: string): SafeReadResult {
  return { ok: false, reason, outcome: errorOutcome(message, errorType) };
}
