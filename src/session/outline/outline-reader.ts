/**
 * The outline pass over a JSONL log: every line is parsed and checked
 * exactly as readSessionLog does (parsing is the cheapest exact check: a byte scan
 * miscounts garbage, foreign and torn lines; an ordinary record line is parsed from its
 * bytes, by the JSON grammar, without making its strings and objects:
 * line-scanner.ts), but of each valid record only what the
 * conversation loader and the plan rules read is kept, in columns (outline-columns.ts),
 * with where its line lies in the file. Full records are read back by byte range on
 * demand: the tail a plan classifies, hashes and continues, and the whole chain when a
 * model request or a replay needs it.
 *
 * The session, its records (fragments merged), their order and every diagnostic are
 * those of readSessionLog (test/session/outline/history-readers.test.ts): both go through the
 * same line checks and session tally, and the rare fragmented uuids (one uuid on
 * several lines) are read again by byte range and merged by the full reader's own
 * accumulator; those merged records are kept whole.
 *
 * A log of 16-256 MiB is read on two threads (outline-parallel.ts), the same lines
 * through the same checks, into the same columns (test/session/outline/outline-parallel.e2e.test.ts).
 * That is this module's default; the CLI asks for it only with four CPUs or more
 * (src/cli/outline-env.ts).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { MendError } from '../../errors.js';
import type { LoadDiagnostic, ReadRecord } from '../conversation.js';
import { DEFAULT_BLOCK_SIZE, bytesLineBlocks, readLineBlocks, type LineBlocksEnd } from '../line-blocks.js';
import { LogAccumulator, lineText, toReadError, type ReadOptions } from '../log-reader.js';
import { outlineSource } from './outline-source.js';
import type { SessionOutline } from './session-outline.js';
import { OutlinePass } from './outline-pass.js';
import { parallelPass, readsInParallel, type OutlineParallel } from './outline-parallel.js';
import type { ChatRecord } from '../records.js';
import { isSessionId } from '../session-paths.js';

/** The source opened again for reading byte ranges, synchronously. */
interface RangeSource {
  read(buffer: Buffer, length: number, position: number): number;
  close(): void;
}
type OpenRanges = () => RangeSource;

const NEWLINE = 0x0a;

/**
 * Byte ranges through a 1 MiB window: the lines a history needs come in file order, so
 * reading them back costs about one sequential pass, not a system call per line.
 */
class RangeWindow {
  private window = Buffer.allocUnsafe(1 << 20);
  private start = 0;
  private end = 0;

  constructor(
    private readonly source: RangeSource,
    private readonly path: string,
  ) {}

  /** The bytes [start, end): a view, valid until the next call. */
  bytes(start: number, end: number): Buffer {
    if (start < this.start || end > this.end) {
      if (end - start > this.window.length) this.window = Buffer.allocUnsafe(end - start);
      this.start = start;
      this.end = start + this.source.read(this.window, this.window.length, start);
      if (end > this.end) throw changedSince(this.path);
    }
    return this.window.subarray(start - this.start, end - this.start);
  }
}

export interface OutlineOptions extends ReadOptions {
  /** How a large file is read on two threads (outline-parallel.ts; default: from 16 MiB on), or false for one. */
  parallel?: OutlineParallel | false;
  /**
   * False: no line is read by the line scanner (line-scanner.ts); every line is parsed as
   * JSON (MEND_OUTLINE_SCAN=0, read by src/cli/outline-env.ts). The same outline either way.
   */
  scan?: boolean;
}

/** The outline pass over a file. */
export async function readSessionOutline(path: string, options: OutlineOptions = {}): Promise<SessionOutline> {
  const ranges: OpenRanges = () => {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (error) {
      throw toReadError(path, error);
    }
    return { read: (buffer, length, position) => readSync(fd, buffer, 0, length, position), close: () => closeSync(fd) };
  };
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    // Reported by the read itself.
  }
  return outlineOf((onBlock, blockSize) => readLineBlocks(path, onBlock, blockSize), ranges, options, path, size, options.parallel ?? {});
}

/** readSessionOutline with the file name's session id, as loadSession reads a path. */
export function readSessionOutlineAt(path: string, options: OutlineOptions = {}): Promise<SessionOutline> {
  const stem = basename(path, '.jsonl');
  return readSessionOutline(path, isSessionId(stem) ? { ...options, fileSessionId: stem } : options);
}

/** The same pass over bytes in memory, as if they were a file (tests). */
export function outlineBytes(bytes: Buffer, options: OutlineOptions = {}): Promise<SessionOutline> {
  const ranges: OpenRanges = () => ({
    read: (buffer, length, position) => (position >= bytes.length ? 0 : bytes.copy(buffer, 0, position, Math.min(bytes.length, position + length))),
    close: () => {},
  });
  return outlineOf((onBlock, size) => bytesLineBlocks(bytes, onBlock, size), ranges, options, '<memory>', bytes.length);
}

type Scan = (onBlock: (bytes: Buffer, offset: number) => boolean, blockSize: number) => Promise<LineBlocksEnd>;

/** The outline pass over every line, on one thread. */
async function singlePass(scan: Scan, sizeHint: number, blockSize: number, scans: boolean): Promise<OutlinePass> {
  const pass = new OutlinePass(sizeHint, sizeHint, true, 0, scans);
  pass.finish(await scan((bytes, offset) => pass.block(bytes, offset), blockSize));
  return pass;
}

async function outlineOf(
  scan: Scan,
  openRanges: OpenRanges,
  options: OutlineOptions,
  path: string,
  sizeHint: number,
  parallel: OutlineParallel | false = false,
): Promise<SessionOutline> {
  const blockSize = options.chunkSize ?? DEFAULT_BLOCK_SIZE;
  let pass: OutlinePass;
  try {
    const scans = options.scan !== false;
    pass = readsInParallel(sizeHint, parallel)
      ? await parallelPass(path, sizeHint, parallel, blockSize, scans)
      : await singlePass(scan, sizeHint, blockSize, scans);
  } catch (error) {
    throw toReadError(path, error);
  }
  const { diagnostics, tally, kept } = pass;
  const line = pass.line;
  const end = pass.end ?? { bytes: 0, lastByte: -1 };

  const sessionId = tally.choose(options.fileSessionId);
  const n = kept.length;
  // Which records of the session share a uuid with another line: only those are read again and merged.
  const fragmented = new Uint8Array(n);
  let anyFragment = false;
  const sessionTag = sessionId === null ? -1 : kept.strings.of(sessionId);
  const byUuid = kept.uuidTable(kept.length);
  for (let i = 0; i < n; i++) {
    if (kept.sessions[i] !== sessionTag) continue;
    const at = byUuid.findOrAdd(i);
    if (at >= 0) {
      fragmented[at] = 1;
      fragmented[i] = 1;
      anyFragment = true;
    }
  }

  /** Runs `use` with the text of kept lines read back through one window. */
  const withLines = <T>(use: (lineAt: (i: number) => string) => T): T => {
    const source = openRanges();
    try {
      const window = new RangeWindow(source, path);
      return use((i) => lineText(window.bytes(kept.starts[i]!, kept.starts[i]! + kept.lengths[i]!).toString('utf8'), kept.lineNos[i]!));
    } finally {
      source.close();
    }
  };

  const merged = new Map<number, ReadRecord>();
  if (anyFragment) {
    const acc = new LogAccumulator();
    withLines((lineAt) => {
      for (let i = 0; i < n; i++) if (fragmented[i] === 1) acc.addLine(lineAt(i), kept.lineNos[i]!);
    });
    const result = acc.finish(sessionId ?? undefined);
    const byLine = new Map(result.records.map((r) => [r.line, r]));
    for (let i = 0; i < n; i++) {
      const m = fragmented[i] === 1 ? byLine.get(kept.lineNos[i]!) : undefined;
      if (m !== undefined) merged.set(i, m);
    }
    diagnostics.push(...result.diagnostics);
  }

  // The session's records: kept lines of its id, a fragmented uuid at its first line only.
  const recordsAll = new Int32Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (kept.sessions[i] !== sessionTag) {
      diagnostics.push({ code: 'mixed_session_id', line: kept.lineNos[i]!, sessionId: kept.sessionId(i) });
      continue;
    }
    if (fragmented[i] === 0 || merged.has(i)) recordsAll[count++] = i;
  }
  // Line order, as the full reader reports them (stable sort).
  diagnostics.sort((a, b) => lineOf(a) - lineOf(b));

  const fullRecords = (indices: readonly number[]): ChatRecord[] =>
    withLines((lineAt) =>
      indices.map((i) => {
        let value: unknown;
        try {
          value = JSON.parse(lineAt(i));
        } catch {
          throw changedSince(path);
        }
        // The line read back must be the record the outline pass saw there.
        if (typeof value !== 'object' || value === null || (value as { uuid?: unknown }).uuid !== kept.uuid(i)) throw changedSince(path);
        return value as ChatRecord;
      }),
    );

  kept.release();
  return outlineSource(kept, recordsAll.slice(0, count), merged, fullRecords, {
    diagnostics,
    sessionId,
    bytes: end.bytes,
    endsWithNewline: end.lastByte === NEWLINE,
    lines: line,
  });
}

function changedSince(path: string): MendError {
  return new MendError('session_read_failed', `Session log ${path} changed while it was being loaded (a line is no longer where it was read); load it again`, {
    path,
  });
}

function lineOf(d: LoadDiagnostic): number {
  return 'line' in d ? d.line : Number.MAX_SAFE_INTEGER;
}
