/**
 * The wing's one interface (README.md): a HistoryReader reads a session log into the
 * SessionOutline the loader and the planner take (src/runtime/outline-plan.ts). Two
 * readers implement it:
 *
 * - `fullReader`, the reference: readSessionLog (src/session/log-reader.ts) parses every
 *   line and keeps every record whole;
 * - `outlineReader`, the fast one: one pass that checks every line the same way but keeps
 *   of each record only what the planner reads, in columns, and reads whole records back
 *   by byte range when asked (outline-reader.ts; ordinary record lines read from their
 *   bytes by line-scanner.ts unless `scan: false`).
 *
 * Everything a reader returns must equal what the reference gives, on every log:
 * test/session/outline/history-readers.test.ts runs one case suite over every reader.
 * Nothing outside src/session/outline imports another file of the wing
 * (.dependency-cruiser.cjs, rule `outline-wing-behind-its-interface`).
 */
import { readSessionBytes, readSessionLog } from '../log-reader.js';
import type { OutlineParallel } from './outline-parallel.js';
import { outlineBytes, readSessionOutline, type OutlineOptions } from './outline-reader.js';
import { wholeOutline } from './outline-source.js';
import type { SessionOutline } from './session-outline.js';

export type { OutlineParallel, SessionOutline };
export type { RecordIndex, RecordIndexEntry } from './record-index.js';
export { indexRecords } from './record-index.js';
export { wholeOutline };
export { uuidToWords } from './uuid-words.js';

/** How a log is read: ReadOptions, and for the outline reader its threads and its scanner. */
export type HistoryReadOptions = OutlineOptions;

export interface HistoryReader {
  /** `full` is the reference; every other reader must give what it gives. */
  readonly name: 'full' | 'outline';
  /** The log at `path`. Never writes. */
  read(path: string, options?: HistoryReadOptions): Promise<SessionOutline>;
  /** The same over bytes in memory, as if they were a file. */
  readBytes(bytes: Buffer, options?: HistoryReadOptions): Promise<SessionOutline>;
}

/** The reference: every line parsed by the full reader, every record kept whole. */
export const fullReader: HistoryReader = {
  name: 'full',
  read: async (path, options = {}) => wholeOutline(await readSessionLog(path, options)),
  readBytes: async (bytes, options = {}) => wholeOutline(await readSessionBytes(bytes, options)),
};

/** The fast path: the outline pass (outline-reader.ts). */
export const outlineReader: HistoryReader = {
  name: 'outline',
  read: readSessionOutline,
  readBytes: outlineBytes,
};

/** Every reader, the reference first (what the shared case suite runs over). */
export const historyReaders: readonly HistoryReader[] = [fullReader, outlineReader];
