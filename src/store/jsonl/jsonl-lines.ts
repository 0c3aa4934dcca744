/**
 * The raw lines of a JSONL log, byte for byte without their '\n' (a final line
 * without one included): what export copies. Blank, torn and garbage lines come
 * out too; the caller decides what to do with them.
 *
 * Cut by the one line splitter (wire/line-splitter.ts) the reader uses; each line is
 * decoded as it completes (decoding copies, so a yielded line never sees the
 * splitter's buffer change).
 */
import { open } from 'node:fs/promises';
import { MendError } from '../../errors.js';
import { DEFAULT_BLOCK_SIZE, LineSplitter } from '../../wire/line-splitter.js';

export async function* jsonlLines(path: string, blockSize = DEFAULT_BLOCK_SIZE): AsyncGenerator<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw readError(path, error);
  }
  try {
    let lines: string[] = [];
    const splitter = new LineSplitter((line) => void lines.push(line.bytes.toString('utf8', line.start, line.end)), { blockSize });
    for (;;) {
      const { buffer, at, length } = splitter.room();
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buffer, at, length, null));
      } catch (error) {
        throw readError(path, error);
      }
      if (bytesRead === 0) break;
      splitter.filled(bytesRead);
      const ready = lines;
      lines = [];
      yield* ready;
    }
    splitter.end();
    yield* lines;
  } finally {
    await handle.close();
  }
}

function readError(path: string, error: unknown): MendError {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT')
    return new MendError('session_not_found', `Session log not found: ${path}`, { path }, { cause: error });
  return new MendError('session_read_failed', `Could not read session log ${path}: ${(error as Error).message}`, { path }, { cause: error });
}
