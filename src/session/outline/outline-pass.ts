/**
 * One outline pass over a run of lines: every line checked as readSessionLog
 * checks it (an ordinary record line read from its bytes by line-scanner.ts, every byte
 * checked as JSON; any other line parsed), each valid record pushed into columns, the session ids
 * tallied, the damaged lines reported. A whole file is one pass; a large file is
 * read as several passes over byte ranges on two threads (outline-parallel.ts), whose
 * results are appended in file order (OutlinePass.append): the same columns, counts
 * and diagnostics as one pass over the file (test/session/outline/outline-parallel.e2e.test.ts).
 *
 * Line numbers are counted from the pass's own first line; a pass that does not start
 * the file strips no byte-order mark (only line 1 of a file can have one), and its
 * numbers are shifted when it is appended.
 */
import { isAscii } from 'node:buffer';
import type { LoadDiagnostic } from '../conversation.js';
import { decodeLine, type LineBlocksEnd } from '../line-blocks.js';
import { INVALID, MALFORMED, SessionTally, checkLine, isBlank, lineText, quickCheckLine } from '../log-reader.js';
import { OutlineColumns, keepsOnlyAscii, type AsciiStrings, type ColumnsData } from './outline-columns.js';
import { LineScanner } from './line-scanner.js';
import type { ChatRecord } from '../records.js';

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
  /** OutlinePass.scanned. */
  scanned: number;
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
  /** Lines kept as line-scanner.ts read them, without JSON.parse (tests and the bench). */
  scanned = 0;
  private readonly scanner = new LineScanner();
  /** The current block as latin1, and whether it is ASCII: made when first needed (handleBytes). */
  private latin1Block: string | null = null;
  private asciiBlock: boolean | null = null;
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
    /** False: every line is parsed (OutlineOptions.scan: MEND_OUTLINE_SCAN=0, and tests compare both readings). */
    private readonly scans = true,
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
   * Handles the line bytes[from, to) at byte `start` of the file. An ordinary record is
   * read from its bytes (line-scanner.ts: every byte checked as JSON, only what the
   * outline keeps taken), the columns being the same as from the parsed record. Any other
   * line is parsed, first as latin1: decoding is then a copy (one a block, `latin1Block`),
   * and JSON.parse reads one byte a character, where UTF-8 makes every line with a
   * non-ASCII character a two-byte string. JSON accepts the same lines either way, and the
   * record is kept only when everything the outline keeps of it is ASCII, i.e. the same as
   * from UTF-8: the block is ASCII, or keepsOnlyAscii says so. Any line left (blank,
   * damaged, not certainly valid, non-ASCII where it is kept, or the first line of a file,
   * which may start with a byte-order mark) goes through `handle` as UTF-8.
   */
  private handleBytes(bytes: Buffer, from: number, to: number, start: number): boolean {
    if (!this.startsFile || this.line > 0) {
      if (this.scans && this.scanner.scan(bytes, from, to) && this.kept.pushScanned(this.scanner, bytes, this.line + 1, start, start + (to - from))) {
        this.line++;
        const kept = this.kept;
        this.tally.add(kept.sessionId(kept.length - 1));
        this.sized(start, to - from);
        this.scanned++;
        this.ascii.uuid = this.ascii.sessionId = null;
        return true;
      }
      const latin1 = (this.latin1Block ??= bytes.toString('latin1'));
      this.asciiBlock ??= isAscii(bytes);
      const record = quickCheckLine(latin1.slice(from, to));
      if (record !== undefined && (this.asciiBlock || keepsOnlyAscii(record, this.ascii))) {
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
    this.tally.add(record.sessionId);
    this.kept.push(record, this.line, start, start + byteLength);
    this.sized(start, byteLength);
  }

  /** After a line is kept: the columns are sized once from the size and the first lines. */
  private sized(start: number, byteLength: number): void {
    const kept = this.kept;
    // Instead of doubling (which briefly held both copies: a third more memory at the end of a 1M-record pass).
    if (kept.length === ESTIMATE_AFTER && this.estimateBytes > 0) {
      const scale = (this.estimateBytes / (start - this.rangeStart + byteLength + 1)) * 1.05;
      kept.reserve(Math.ceil(this.line * scale) + 1024, Math.ceil(kept.ids.count * scale) + 1024, Math.ceil(kept.ids.used * scale) + 4096);
    }
  }

  /**
   * Handles a run of complete lines ('\n' included), as bytes, starting at byte `offset`
   * of the file; returns false, and stops before it, at the first line that starts at
   * or after `range.end` when the range cannot be extended.
   */
  block(bytes: Buffer, offset: number, range: LineRange = WHOLE_FILE): boolean {
    // The block as latin1 and whether it is ASCII, made when a line is parsed, once a block.
    this.latin1Block = this.asciiBlock = null;
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
    return {
      columns: this.kept.data(),
      diagnostics: this.diagnostics,
      tally: this.tally.entries(),
      lines: this.line,
      reparsed: this.reparsed,
      scanned: this.scanned,
      end: this.end,
    };
  }

  /** Appends a pass over the lines right after this one's. */
  append(next: PassData): void {
    const base = this.line;
    this.kept.append(next.columns, base);
    for (const d of next.diagnostics) this.diagnostics.push('line' in d ? { ...d, line: d.line + base } : d);
    for (const [id, count] of next.tally) this.tally.add(id, count);
    this.line += next.lines;
    this.reparsed += next.reparsed;
    this.scanned += next.scanned;
    if (next.end !== null) this.end = next.end;
  }
}

/** The lines a pass reads: those that start before `end`, which `extend` may move on (false: it cannot). */
export interface LineRange {
  readonly end: number;
  extend(): boolean;
}

const WHOLE_FILE: LineRange = { end: Number.POSITIVE_INFINITY, extend: () => false };
