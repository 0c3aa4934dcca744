/**
 * Streams a session log into validated, fragment-merged records. Data problems
 * (torn tail, garbage lines, invalid records, foreign session ids) come back as
 * diagnostics; only I/O failures throw.
 *
 * Lines are split on raw bytes so a 100 MB log is never held as one string:
 * '\n' (0x0a) cannot occur inside a multi-byte UTF-8 sequence, so splitting
 * before decoding is safe, and a line spanning chunks is decoded only once it
 * is complete.
 */
import { createReadStream } from 'node:fs';
import { MendError } from '../errors.js';
import type { LoadDiagnostic, ReadRecord } from './conversation.js';
import { mergeFragments } from './record-merge.js';
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
  return (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) && text.trim().length === 0;
}

/** Decodes bytes [start, end) minus a trailing '\r' (CRLF logs), plus a UTF-8 BOM on line 1. */
function decodeLine(buf: Buffer, start: number, end: number, line: number): string {
  if (end > start && buf[end - 1] === CR) end--;
  if (line === 1 && end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf) {
    start += 3;
  }
  return buf.toString('utf8', start, end);
}

export async function readSessionLog(path: string, options: ReadOptions = {}): Promise<ReadResult> {
  const acc = new LogAccumulator();
  let pending: Buffer[] = [];
  let bytes = 0;
  let line = 0;
  let lastByte = -1;

  const handle = (buf: Buffer, start: number, end: number): void => {
    line++;
    const text = decodeLine(buf, start, end, line);
    if (!isBlank(text) && !acc.addLine(text, line)) acc.diagnostics.push({ code: 'malformed_line', line });
  };

  try {
    const stream = createReadStream(path, { highWaterMark: options.chunkSize ?? DEFAULT_CHUNK });
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (chunk.length === 0) continue;
      bytes += chunk.length;
      lastByte = chunk[chunk.length - 1]!;
      let start = 0;
      let nl = chunk.indexOf(NEWLINE, start);
      while (nl !== -1) {
        if (pending.length > 0) {
          pending.push(chunk.subarray(start, nl));
          const joined = Buffer.concat(pending);
          pending = [];
          handle(joined, 0, joined.length);
        } else {
          handle(chunk, start, nl);
        }
        start = nl + 1;
        nl = chunk.indexOf(NEWLINE, start);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    }
  } catch (error) {
    throw toReadError(path, error);
  }

  // The bytes after the last '\n': a complete record that only lacks its newline,
  // or the torn remains of a write cut short by a crash.
  if (pending.length > 0) {
    const tail = Buffer.concat(pending);
    line++;
    const text = decodeLine(tail, 0, tail.length, line);
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
