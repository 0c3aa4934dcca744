/**
 * Streams a session log into validated, fragment-merged records. Data problems
 * (torn tail, garbage lines, invalid records, foreign session ids) come back as
 * diagnostics; only I/O failures throw.
 *
 * Newlines are found on raw bytes, so a 100 MB log is never held as one
 * string: each chunk is cut after its last '\n' and only that block of
 * complete lines is decoded (once per block; per-line decoding measured ~20%
 * slower). '\n' (0x0a) cannot occur inside a multi-byte UTF-8 sequence, so the
 * cut never splits a character. Only parsed records are kept.
 *
 * Torn tail: the file does not end with '\n' and its last line does not parse.
 * A last line that parses is a complete record that merely lacks its newline.
 * A whitespace-only last line is blank, like any other.
 */
import { createReadStream } from 'node:fs';
import { MendError } from '../errors.js';
import type { LoadDiagnostic, ReadRecord } from './conversation.js';
import { mergeFragments } from './record-merge.js';
import { isTooDeep, MAX_RECORD_DEPTH } from './nesting-depth.js';
import { validateChatRecord } from './record-validation.js';

export interface ReadResult {
  /** Valid records in file order, fragments merged into the first one's position. */
  records: ReadRecord[];
  diagnostics: LoadDiagnostic[];
  /** sessionId of the first valid record, or null when there is none. */
  sessionId: string | null;
  /** Size of the file in bytes. */
  bytes: number;
  /** Whether the last byte is '\n' (false for an empty file). */
  endsWithNewline: boolean;
  /** Number of lines, counting a final line without '\n'. */
  lines: number;
}

export interface ReadOptions {
  /** Read chunk size; tests shrink it to exercise lines that span chunks. */
  chunkSize?: number;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const DEFAULT_CHUNK = 1 << 20;

/** Accumulates records and diagnostics line by line. */
class LogAccumulator {
  readonly records: ReadRecord[] = [];
  readonly diagnostics: LoadDiagnostic[] = [];
  sessionId: string | null = null;
  private readonly byUuid = new Map<string, number>();

  /** Handles one complete line; returns false when it did not parse as JSON. */
  addLine(text: string, line: number): boolean {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return false;
    }
    if (isTooDeep(value, text.length)) {
      this.diagnostics.push({ code: 'invalid_record', line, reason: `nested deeper than ${MAX_RECORD_DEPTH} levels` });
      return true;
    }
    const check = validateChatRecord(value);
    if (!check.ok) {
      this.diagnostics.push({ code: 'invalid_record', line, reason: check.reason });
      return true;
    }
    const record = check.record;
    if (this.sessionId === null) {
      this.sessionId = record.sessionId;
    } else if (record.sessionId !== this.sessionId) {
      this.diagnostics.push({ code: 'mixed_session_id', line, sessionId: record.sessionId });
      return true;
    }
    const at = this.byUuid.get(record.uuid);
    if (at === undefined) {
      this.byUuid.set(record.uuid, this.records.length);
      this.records.push({ line, record });
      return true;
    }
    const first = this.records[at]!;
    const merged = mergeFragments(first.record, record);
    if (merged.ok) this.records[at] = { line: first.line, record: merged.record };
    else this.diagnostics.push({ code: 'invalid_record', line, reason: merged.reason });
    return true;
  }
}

function isBlank(text: string): boolean {
  if (text.length === 0) return true;
  const c = text.charCodeAt(0);
  // Only lines starting with whitespace can be blank; avoid trim() on every line.
  return (c === 0x20 || c === 0x09 || c === 0x0d) && text.trim().length === 0;
}

/** Without a trailing '\r' (CRLF logs) and, on line 1, without a UTF-8 BOM. */
function lineText(text: string, line: number): string {
  if (text.charCodeAt(text.length - 1) === CR) text = text.slice(0, -1);
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return text;
}

export async function readSessionLog(path: string, options: ReadOptions = {}): Promise<ReadResult> {
  const acc = new LogAccumulator();
  /** Bytes after the last '\n' seen so far: the start of a line still being read. */
  let pending: Buffer[] = [];
  let bytes = 0;
  let line = 0;
  let lastByte = -1;

  // One decode per block of complete lines instead of one per line: a block
  // always ends at a '\n', so no character is cut, and a line longer than a
  // chunk is joined from its pieces only once complete.
  const handleBlock = (block: string): void => {
    let start = 0;
    let nl = block.indexOf('\n', start);
    while (nl !== -1) {
      line++;
      const text = lineText(block.slice(start, nl), line);
      if (!isBlank(text) && !acc.addLine(text, line)) acc.diagnostics.push({ code: 'malformed_line', line });
      start = nl + 1;
      nl = block.indexOf('\n', start);
    }
  };

  try {
    const stream = createReadStream(path, { highWaterMark: options.chunkSize ?? DEFAULT_CHUNK });
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (chunk.length === 0) continue;
      bytes += chunk.length;
      lastByte = chunk[chunk.length - 1]!;
      const lastNewline = chunk.lastIndexOf(NEWLINE);
      if (lastNewline === -1) {
        pending.push(chunk);
        continue;
      }
      const complete = chunk.subarray(0, lastNewline + 1);
      if (pending.length > 0) {
        pending.push(complete);
        handleBlock(Buffer.concat(pending).toString('utf8'));
      } else {
        handleBlock(complete.toString('utf8'));
      }
      pending = lastNewline + 1 < chunk.length ? [chunk.subarray(lastNewline + 1)] : [];
    }
  } catch (error) {
    throw toReadError(path, error);
  }

  // The bytes after the last '\n': a complete record that only lacks its newline,
  // or the torn remains of a write cut short by a crash.
  if (pending.length > 0) {
    const tail = Buffer.concat(pending);
    line++;
    const text = lineText(tail.toString('utf8'), line);
    if (!isBlank(text) && !acc.addLine(text, line)) {
      acc.diagnostics.push({ code: 'torn_tail', line, bytes: tail.length });
    }
  }

  return {
    records: acc.records,
    diagnostics: acc.diagnostics,
    sessionId: acc.sessionId,
    bytes,
    endsWithNewline: lastByte === NEWLINE,
    lines: line,
  };
}

function toReadError(path: string, error: unknown): MendError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') {
    return new MendError('session_not_found', `Session log not found: ${path}`, { path }, { cause: error });
  }
  return new MendError(
    'session_read_failed',
    `Could not read session log ${path}: ${(error as Error | undefined)?.message ?? String(error)}`,
    { path, errno: code },
    { cause: error },
  );
}
