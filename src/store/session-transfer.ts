/**
 * Moving a session between stores as ndjson (`mend sessions export|import`),
 * store-neutral: a JSONL session goes to PostgreSQL and back with byte-identical
 * records and the same plan.
 *
 * Export writes each stored line as JSON.stringify(value) + '\n': the very bytes both
 * stores write, so a record mend or Qwen wrote comes out unchanged. A line that does
 * not come out identical (hand-edited spacing) is counted in `reserialized`; a line
 * that is not JSON (a torn tail, garbage) cannot travel as ndjson and is listed in
 * `skipped` with its line number.
 *
 * Import streams its input through the one line splitter (wire/line-splitter.ts) and
 * checks every line as every store's reader does (checkLine: JSON, nesting depth, the
 * record schema), so what is imported reads back without a diagnostic. Everything is
 * validated before anything is written (every line a valid record of one session, and
 * that session new to the target store); a bad line is listed with its number and the
 * import writes nothing. Then the session is created whole under a writer lease
 * (WriterLease.createWith: absent or complete, whatever happens during the write).
 */
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { MendError } from '../errors.js';
import type { LoadDiagnostic } from '../session/conversation.js';
import { INVALID, MALFORMED, checkLine } from '../session/log-reader.js';
import type { ChatRecord } from '../session/records.js';
import { canonicalSessionId } from '../session/session-ids.js';
import { LineSplitter, isBlank, viewText } from '../wire/line-splitter.js';
import type { ProjectScope, SessionRef, SessionStore, WriterIdentity } from './session-store.js';

export interface ExportResult {
  records: number;
  /** Lines copied as a re-serialization because their stored bytes were not compact JSON. */
  reserialized: number;
  /** Lines that are not JSON (torn tail, garbage) and so cannot be exported. */
  skipped: { line: number; reason: string }[];
}

export interface ExportOptions {
  /** End `writable` when done (default true; false for process.stdout). */
  end?: boolean;
}

async function* storedLines(store: SessionStore, ref: SessionRef): AsyncGenerator<string> {
  if (store.readLines) {
    yield* store.readLines(ref);
    return;
  }
  // A store without raw lines: its merged records, re-serialized.
  for (const { record } of (await store.read(ref)).records) yield JSON.stringify(record);
}

/** Export output is written in pieces of about this many characters (one write per line was one call per record). */
const WRITE_PIECE = 1 << 16;

export async function exportSession(store: SessionStore, ref: SessionRef, writable: Writable, options: ExportOptions = {}): Promise<ExportResult> {
  const result: ExportResult = { records: 0, reserialized: 0, skipped: [] };
  let failure: unknown = null;
  const failed = new Promise<never>((_, reject) => writable.once('error', reject));
  failed.catch((error: unknown) => {
    failure = error;
  });
  let piece = '';
  const write = async (text: string): Promise<void> => {
    if (failure !== null) throw failure;
    if (!writable.write(text)) await Promise.race([once(writable, 'drain'), failed]);
  };
  let line = 0;
  for await (const text of storedLines(store, ref)) {
    line++;
    if (isBlank(text)) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      result.skipped.push({ line, reason: 'not JSON (torn or damaged line)' });
      continue;
    }
    const json = JSON.stringify(value);
    if (json !== text) result.reserialized++;
    result.records++;
    piece += `${json}\n`;
    if (piece.length >= WRITE_PIECE) {
      await write(piece);
      piece = '';
    }
  }
  if (piece !== '') await write(piece);
  if (options.end !== false) {
    const finished = once(writable, 'finish');
    writable.end();
    await Promise.race([finished, failed]);
  }
  if (failure !== null) throw failure;
  return result;
}

export interface ImportOptions {
  /** The writer identity the import's lease is taken under. */
  who: WriterIdentity;
}

export interface ImportResult {
  ref: SessionRef;
  records: number;
}

export interface BadLine {
  /** 1-based line of the input. */
  line: number;
  reason: string;
}

/** Bad lines named in the error's message; its details list up to MAX_LISTED_BAD_LINES. */
const NAMED_BAD_LINES = 5;
const MAX_LISTED_BAD_LINES = 100;

function refused(bad: BadLine[], count: number): MendError {
  const named = bad
    .slice(0, NAMED_BAD_LINES)
    .map((b) => `line ${b.line}: ${b.reason}`)
    .join('; ');
  const more = count > NAMED_BAD_LINES ? `; ${count - NAMED_BAD_LINES} more` : '';
  const first = bad[0]!;
  return new MendError('malformed_line', `Import refused, ${count === 1 ? '1 bad line' : `${count} bad lines`} (${named}${more}); nothing was written`, {
    line: first.line,
    reason: first.reason,
    badLines: bad,
    badLineCount: count,
  });
}

/**
 * Every line of the input checked as it streams in: the records, or every bad line
 * (the first MAX_LISTED_BAD_LINES of them listed, all counted).
 */
async function readImport(readable: Readable): Promise<{ records: ChatRecord[]; bad: BadLine[]; badCount: number }> {
  const records: ChatRecord[] = [];
  const bad: BadLine[] = [];
  let badCount = 0;
  const reject = (line: number, reason: string): void => {
    badCount++;
    if (bad.length < MAX_LISTED_BAD_LINES) bad.push({ line, reason });
  };
  const diagnostics: LoadDiagnostic[] = [];
  const splitter = new LineSplitter((view) => {
    const text = viewText(view);
    if (isBlank(text)) return;
    const record = checkLine(text, view.number, diagnostics);
    if (record === MALFORMED) return reject(view.number, view.terminated ? 'not JSON' : 'not JSON (a torn last line)');
    if (record === INVALID) {
      const diagnostic = diagnostics.pop();
      return reject(view.number, `not a session record (${diagnostic && 'reason' in diagnostic ? diagnostic.reason : 'invalid'})`);
    }
    if (records.length > 0 && record.sessionId !== records[0]!.sessionId) {
      return reject(view.number, `record of session ${record.sessionId} in an import of session ${records[0]!.sessionId}`);
    }
    records.push(record);
  });
  for await (const chunk of readable) splitter.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer));
  splitter.end();
  return { records, bad, badCount };
}

export async function importSession(store: SessionStore, scope: ProjectScope, readable: Readable, options: ImportOptions): Promise<ImportResult> {
  const { records, bad, badCount } = await readImport(readable);
  if (badCount > 0) throw refused(bad, badCount);
  // One session whatever the case its id is spelled in: records written as `ABC…` join
  // (or collide with) the session `abc…`, never become a second one with its own lock.
  for (const [i, record] of records.entries()) {
    const canonical = canonicalSessionId(record.sessionId);
    if (canonical !== record.sessionId) records[i] = { ...record, sessionId: canonical };
  }
  if (records.length === 0) throw new MendError('usage', 'Nothing to import: the input holds no records');
  const ref = await store.newSession(scope, records[0]!.sessionId);
  const lease = await store.acquire(ref, options.who);
  try {
    // Another import of the same session may have finished between the check above and the lease.
    if (await store.exists(ref)) throw new MendError('session_exists', `session ${ref.sessionId} already exists`, { sessionId: ref.sessionId });
    // Whole or not at all: a crash mid-import leaves no partial session to resume.
    await lease.createWith(records);
  } finally {
    await lease.release();
  }
  return { ref, records: records.length };
}
