/**
 * The index pass over a JSONL log (issue 11): every line is parsed and checked
 * exactly as readSessionLog does (parsing is the cheapest exact check: a byte scan
 * miscounts garbage, foreign and torn lines), but per record only what the plan
 * rules need is kept (RecordIndexEntry) plus where its line lies in the file, not
 * the record. The result equals indexRecords(readSessionLog(...)) (the store
 * contract suite checks it on the corpus and on shuffled and duplicated logs).
 *
 * Fragments (one uuid on several lines) are rare and their merge needs the whole
 * pieces (repeated lines are found on their JSON): their lines are read again by
 * byte range and go through the full reader's own accumulator, so merged records
 * and their diagnostics come from one implementation.
 */
import { open } from 'node:fs/promises';
import type { LoadDiagnostic } from './conversation.js';
import { DEFAULT_BLOCK_SIZE, readLineBlocks, type LineBlocksEnd } from './line-blocks.js';
import { INVALID, LogAccumulator, MALFORMED, SessionTally, checkLine, isBlank, lineText, toReadError, type ReadOptions } from './log-reader.js';
import { indexEntryOf, type RecordIndex, type RecordIndexEntry } from './record-index.js';

/**
 * The valid record lines, as parallel columns rather than an object per line: at 100k
 * records every object and repeated string costs megabytes the index pass exists to save.
 */
class IndexedLines {
  readonly entries: RecordIndexEntry[] = [];
  readonly sessionIds: string[] = [];
  /** Byte range of each line, without its '\n'. */
  starts: Float64Array<ArrayBuffer> = new Float64Array(1024);
  ends: Float64Array<ArrayBuffer> = new Float64Array(1024);

  push(entry: RecordIndexEntry, sessionId: string, start: number, end: number): void {
    const i = this.entries.length;
    if (i === this.starts.length) {
      const grow = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
    }
    const previous = this.entries[i - 1];
    // JSON.parse makes a fresh string of every value: the session id of the previous line
    // and its uuid (usually this record's parent) are kept once, not once per record.
    this.sessionIds.push(i > 0 && this.sessionIds[i - 1] === sessionId ? this.sessionIds[i - 1]! : sessionId);
    if (previous !== undefined && entry.parentUuid === previous.uuid) entry.parentUuid = previous.uuid;
    this.entries.push(entry);
    this.starts[i] = start;
    this.ends[i] = end;
  }
}

export interface SessionIndex extends RecordIndex {
  /** Size of the file in bytes. */
  bytes: number;
  lines: number;
}

export async function readSessionIndex(path: string, options: ReadOptions = {}): Promise<SessionIndex> {
  const diagnostics: LoadDiagnostic[] = [];
  const tally = new SessionTally();
  const kept = new IndexedLines();
  let line = 0;

  const handle = (raw: string, start: number, byteLength: number): boolean => {
    line++;
    const text = lineText(raw, line);
    if (isBlank(text)) return true;
    const record = checkLine(text, line, diagnostics);
    if (record === MALFORMED) return false;
    if (record === INVALID) return true;
    tally.add(record.sessionId);
    kept.push(indexEntryOf(line, record), record.sessionId, start, start + byteLength);
    return true;
  };

  const onBlock = (block: string, offset: number, bytes: Buffer): void => {
    let start = 0;
    let byteStart = 0;
    // Byte offsets come from the raw bytes, found in step with the string's newlines: each
    // '\n' of the text is a 0x0a byte and no other byte decodes to one, whereas string
    // lengths differ from byte lengths for non-ASCII text and invalid UTF-8.
    for (let nl = block.indexOf('\n'); nl !== -1; nl = block.indexOf('\n', start)) {
      const byteEnd = bytes.indexOf(0x0a, byteStart);
      if (!handle(block.slice(start, nl), offset + byteStart, byteEnd - byteStart)) diagnostics.push({ code: 'malformed_line', line });
      start = nl + 1;
      byteStart = byteEnd + 1;
    }
  };

  let end: LineBlocksEnd;
  try {
    end = await readLineBlocks(path, onBlock, options.chunkSize ?? DEFAULT_BLOCK_SIZE);
  } catch (error) {
    throw toReadError(path, error);
  }
  if (end.tail !== null) {
    const tailStart = end.bytes - end.tail.length;
    if (!handle(end.tail.toString('utf8'), tailStart, end.tail.length)) diagnostics.push({ code: 'torn_tail', line, bytes: end.tail.length });
  }

  const sessionId = tally.choose(options.fileSessionId);
  const entries: RecordIndexEntry[] = [];
  const n = kept.entries.length;
  // Which uuids of the session have more than one line: only those need their pieces again.
  const pieces = new Map<string, number>();
  for (let i = 0; i < n; i++) if (kept.sessionIds[i] === sessionId) pieces.set(kept.entries[i]!.uuid, (pieces.get(kept.entries[i]!.uuid) ?? 0) + 1);
  const fragmented: Array<{ position: number; start: number; end: number }> = [];
  for (let i = 0; i < n; i++) {
    if (kept.sessionIds[i] === sessionId && pieces.get(kept.entries[i]!.uuid)! > 1)
      fragmented.push({ position: kept.entries[i]!.position, start: kept.starts[i]!, end: kept.ends[i]! });
  }
  const merged = fragmented.length > 0 ? await mergeFragments(path, fragmented, sessionId!) : null;
  for (let i = 0; i < n; i++) {
    const entry = kept.entries[i]!;
    if (kept.sessionIds[i] !== sessionId) {
      diagnostics.push({ code: 'mixed_session_id', line: entry.position, sessionId: kept.sessionIds[i]! });
      continue;
    }
    if (pieces.get(entry.uuid)! === 1) entries.push(entry);
    else {
      const m = merged!.get(entry.position);
      if (m !== undefined) entries.push(m);
    }
  }
  if (merged !== null) diagnostics.push(...merged.diagnostics);
  // Line order, as the full reader reports them (stable sort).
  diagnostics.sort((a, b) => lineOf(a) - lineOf(b));
  return { sessionId, entries, diagnostics, bytes: end.bytes, lines: line };
}

function lineOf(d: LoadDiagnostic): number {
  return 'line' in d ? d.line : Number.MAX_SAFE_INTEGER;
}

/** The lines of fragmented uuids, read again and merged by the full reader: entries by first line, and their diagnostics. */
async function mergeFragments(
  path: string,
  lines: Array<{ position: number; start: number; end: number }>,
  sessionId: string,
): Promise<Map<number, RecordIndexEntry> & { diagnostics: LoadDiagnostic[] }> {
  const acc = new LogAccumulator();
  const file = await open(path, 'r').catch((error: unknown) => {
    throw toReadError(path, error);
  });
  try {
    for (const k of lines) {
      const bytes = Buffer.allocUnsafe(k.end - k.start);
      await file.read(bytes, 0, bytes.length, k.start);
      acc.addLine(lineText(bytes.toString('utf8'), k.position), k.position);
    }
  } finally {
    await file.close();
  }
  const { records, diagnostics } = acc.finish(sessionId);
  const result = new Map<number, RecordIndexEntry>() as Map<number, RecordIndexEntry> & { diagnostics: LoadDiagnostic[] };
  for (const r of records) result.set(r.line, indexEntryOf(r.line, r.record));
  result.diagnostics = diagnostics;
  return result;
}
