/**
 * The raw lines of a JSONL log, byte for byte without their '\n' (a final line
 * without one included): what export copies. Blank, torn and garbage lines come
 * out too; the caller decides what to do with them.
 */
import { createReadStream } from 'node:fs';
import { MendError } from '../../errors.js';

export async function* jsonlLines(path: string): AsyncGenerator<string> {
  let pending: Buffer[] = [];
  try {
    for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
      let start = 0;
      let nl = chunk.indexOf(0x0a, start);
      while (nl !== -1) {
        pending.push(chunk.subarray(start, nl));
        // Decoded per complete line: '\n' never occurs inside a UTF-8 sequence.
        yield Buffer.concat(pending).toString('utf8');
        pending = [];
        start = nl + 1;
        nl = chunk.indexOf(0x0a, start);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new MendError('session_not_found', `Session log not found: ${path}`, { path }, { cause: error });
    throw new MendError('session_read_failed', `Could not read session log ${path}: ${(error as Error).message}`, { path }, { cause: error });
  }
  if (pending.length > 0) yield Buffer.concat(pending).toString('utf8');
}
