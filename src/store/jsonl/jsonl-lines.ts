/**
 * The raw lines of a JSONL log, byte for byte without their '\n' (a final line
 * without one included): what export copies. Blank, torn and garbage lines come
 * out too; the caller decides what to do with them.
 *
 * Read in 64 KiB blocks into one reused buffer (as the reader, see
 * session/line-blocks.ts): a line is decoded straight from the buffer once its '\n'
 * is there ('\n' never occurs inside a UTF-8 sequence), and the unfinished line moves
 * to the buffer's front, so no line costs a Buffer.concat. Decoding copies, so a
 * yielded line never sees the buffer's next contents.
 */
import { open } from 'node:fs/promises';
import { MendError } from '../../errors.js';
import { DEFAULT_BLOCK_SIZE } from '../../session/line-blocks.js';

export async function* jsonlLines(path: string, blockSize = DEFAULT_BLOCK_SIZE): AsyncGenerator<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw readError(path, error);
  }
  try {
    let buffer = Buffer.allocUnsafe(2 * blockSize);
    let held = 0;
    for (;;) {
      if (buffer.length - held < blockSize) {
        const bigger = Buffer.allocUnsafe(Math.max(buffer.length * 2, held + blockSize));
        buffer.copy(bigger, 0, 0, held);
        buffer = bigger;
      }
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buffer, held, blockSize, null));
      } catch (error) {
        throw readError(path, error);
      }
      if (bytesRead === 0) break;
      const end = held + bytesRead;
      let start = 0;
      for (let nl = buffer.indexOf(0x0a, held); nl !== -1 && nl < end; nl = buffer.indexOf(0x0a, nl + 1)) {
        yield buffer.toString('utf8', start, nl);
        start = nl + 1;
      }
      buffer.copy(buffer, 0, start, end);
      held = end - start;
    }
    if (held > 0) yield buffer.toString('utf8', 0, held);
  } finally {
    await handle.close();
  }
}

function readError(path: string, error: unknown): MendError {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT')
    return new MendError('session_not_found', `Session log not found: ${path}`, { path }, { cause: error });
  return new MendError('session_read_failed', `Could not read session log ${path}: ${(error as Error).message}`, { path }, { cause: error });
}
