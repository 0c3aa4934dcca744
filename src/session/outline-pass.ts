/**
 * One outline pass over a run of lines (issue 11): every line parsed and checked as
 * readSessionLog checks it, each valid record pushed into columns, the session ids
 * tallied, the damaged lines reported. A whole file is one pass; a large file is
 * read as several passes over byte ranges on two threads (outline-parallel.ts), whose
 * results are appended in file order (OutlinePass.append): the same columns, counts
 * and diagnostics as one pass over the file (test/session/outline-parallel.test.ts).
 *
 * Line numbers are counted from the pass's own first line; a pass that does not start
 * the file strips no byte-order mark (only line 1 of a file can have one), and its
 * numbers are shifted when it is appended.
 */
import { isAscii } from 'node:buffer';
import type { LoadDiagnostic } from './conversation.js';
import { decodeLine, type LineBlocksEnd } from './line-blocks.js';
import { INVALID, MALFORMED, SessionTally, checkLine, isBlank, lineText, quickCheckLine } from './log-reader.js';
import { OutlineColumns, keepsOnlyAscii, type AsciiStrings, type ColumnsData } from './outline-columns.js';
import type { ChatRecord } from './records.js';

const NEWLINE = 0x0a;

/** Lines after which the columns are sized for the whole file. */
const ESTIMATE_AFTER = 1000;

/** What a pass hands over to be appended to another (a structured-clone message between threads). */
export interface PassData {
  columns: ColumnsData;
  diagnostics: LoadDiagnostic[];
  /** Records per session id, in first-seen order. */
  tally: [string, number][];
  lines: number;
  /** OutlinePass.reparsed. */
  reparsed: number;
  /** Set when the pass read to the end of the file. */
  end: { bytes: number; lastByte: number } | null;
}

export class OutlinePass {
  readonly diagnostics: LoadDiagnostic[] = [];
  readonly tally = new SessionTally();
  readonly kept: OutlineColumns;
  /** Lines handled so far (numbered from 1 at this pass's first line). */
  line = 0;
  /** How many chunks a worker read of this pass's lines (outline-parallel.ts; tests and the bench). */
  workerChunks = 0;
  /** Lines parsed a second time, as UTF-8, after their latin1 reading was not kept (tests and the bench). */
  reparsed = 0;
  /** The last record's uuid and session id when it was read as latin1 (then they are ASCII), else null. */
  private readonly ascii: AsciiStrings = { uuid: null, sessionId: null };
  /** Where the line starts that `block` stopped before. */
  stoppedAt = -1;
  /** Where the file ended, once a pass reached its end. */
  end: { bytes: number; lastByte: number } | null = null;

  /**
   * `fileBytes`: the size of the whole file (offset width and column sizing; 0 when
   * unknown); `estimateBytes`: the bytes this pass's columns are sized for (the whole
   * file for the pass that keeps the result, its own range for a worker's).
   */
  constructor(
    fileBytes: number,
    private readonly estimateBytes: number,
    private readonly startsFile: boolean,
    private readonly rangeStart = 0,
  ) {
    // An unknown size (0) keeps 64-bit offsets.
    this.kept = new OutlineColumns(fileBytes > 0 ? fileBytes : Number.MAX_SAFE_INTEGER);
  }

  /** Handles one line (without its '\n') at byte `start`; false when it did not parse as JSON. */
  handle(raw: string, start: number, byteLength: number): boolean {
    const line = ++this.line;
    // lineText strips a byte-order mark on line 1 only: the first line of the file.
    const text = lineText(raw, this.startsFile ? line : 0);
    if (isBlank(text)) return true;
    const record = checkLine(text, line, this.diagnostics);
    if (record === MALFORMED) return false;
    if (record === INVALID) return true;
    this.keep(record, start, byteLength);
    return true;
  }

  /**
   * Handles the line bytes[from, to) at byte `start` of the file. Read first as latin1:
   * decoding is then a copy and JSON.parse reads one byte a character, where UTF-8 makes
   * every line with a non-ASCII character a two-byte string (issue 11: a third of a
   * Qwen-format log's decode and parse). JSON accepts the same lines either way, and the
   * record is kept only when everything the outline keeps of it is ASCII, i.e. the same
   * as from UTF-8 (keepsOnlyAscii). Any other line (blank, damaged, not certainly valid,
   * non-ASCII where it is kept, or the first line of a file, which may start with a
   * byte-order mark) goes through `handle` as UTF-8, as before.
   */
  private handleBytes(bytes: Buffer, from: number, to: number, start: number): boolean {
    if (!this.startsFile || this.line > 0) {
      const record = quickCheckLine(bytes.toString('latin1', from, to));
      // An ASCII line reads the same either way (half a Qwen log's lines): only the others need the check.
      if (record !== undefined && (isAscii(bytes.subarray(from, to)) || keepsOnlyAscii(record, this.ascii))) {
        this.line++;
        this.keep(record, start, to - from);
        this.ascii.uuid = record.uuid;
        this.ascii.sessionId = record.sessionId;
        return true;
      }
      this.reparsed++;
    }
    this.ascii.uuid = this.ascii.sessionId = null;
    return this.handle(decodeLine(bytes, from, to), start, to - from);
  }

  private keep(record: ChatRecord, start: number, byteLength: number): void {
    const line = this.line;
    this.tally.add(record.sessionId);
    const kept = this.kept;
    kept.push(record, line, start, start + byteLength);
    // Columns sized once from the size and the first lines, instead of doubling
    // (which briefly held both copies: a third more memory at the end of a 1M-record pass).
    if (kept.length === ESTIMATE_AFTER && this.estimateBytes > 0) {
      const scale = (this.estimateBytes / (start - this.rangeStart + byteLength + 1)) * 1.05;
      kept.reserve(Math.ceil(line * scale) + 1024, Math.ceil(kept.ids.count * scale) + 1024, Math.ceil(kept.ids.used * scale) + 4096);
    }
  }

  /**
   * Handles a run of complete lines ('\n' included), as bytes, starting at byte `offset`
   * of the file; returns false, and stops before it, at the first line that starts at
   * or after `range.end` when the range cannot be extended.
   */
  block(bytes: Buffer, offset: number, range: LineRange = WHOLE_FILE): boolean {
    let start = 0;
    for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE, start)) {
      while (offset + start >= range.end) {
        if (!range.extend()) {
          this.stoppedAt = offset + start;
          return false;
        }
      }
      if (!this.handleBytes(bytes, start, nl, offset + start)) this.diagnostics.push({ code: 'malformed_line', line: this.line });
      start = nl + 1;
    }
    return true;
  }

  /**
   * The end of the file, reached by a read from byte `base`: a last line without its
   * newline (torn when it does not parse), the size, the last byte. False, and nothing
   * handled, when that last line starts past `range` (it is another pass's).
   */
  finish(end: LineBlocksEnd, base = 0, range: LineRange = WHOLE_FILE): boolean {
    if (end.tail !== null) {
      const tailStart = base + end.bytes - end.tail.length;
      while (tailStart >= range.end) {
        if (!range.extend()) {
          this.stoppedAt = tailStart;
          return false;
        }
      }
      if (!this.handle(end.tail.toString('utf8'), tailStart, end.tail.length))
        this.diagnostics.push({ code: 'torn_tail', line: this.line, bytes: end.tail.length });
    }
    this.end = { bytes: base + end.bytes, lastByte: end.lastByte };
    return true;
  }

  /** This pass as a message (its column buffers to be transferred). */
  data(): PassData {
    return { columns: this.kept.data(), diagnostics: this.diagnostics, tally: this.tally.entries(), lines: this.line, reparsed: this.reparsed, end: this.end };
  }

  /** Appends a pass over the lines right after this one's. */
  append(next: PassData): void {
    const base = this.line;
    this.kept.append(next.columns, base);
    for (const d of next.diagnostics) this.diagnostics.push('line' in d ? { ...d, line: d.line + base } : d);
    for (const [id, count] of next.tally) this.tally.add(id, count);
    this.line += next.lines;
    this.reparsed += next.reparsed;
    if (next.end !== null) this.end = next.end;
  }
}

/** The lines a pass reads: those that start before `end`, which `extend` may move on (false: it cannot). */
export interface LineRange {
  readonly end: number;
  extend(): boolean;
}

const WHOLE_FILE: LineRange = { end: Number.POSITIVE_INFINITY, extend: () => false };
