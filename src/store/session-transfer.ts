/**
 * Moving a session between stores as ndjson (`mend sessions export|import`),
 * store-neutral: a JSONL session goes to PostgreSQL and back with byte-identical
 * records and the same plan.
 *
 * Export writes each stored line through `ndjson`'s stringify(), which writes
 * JSON.stringify(value) + EOL: the very bytes both stores write, so a record
 * mend or Qwen wrote comes out unchanged. A line that does not come out
 * identical (hand-edited spacing) is counted in `reserialized`; a line that is
 * not JSON (a torn tail, garbage) cannot travel as ndjson and is listed in
 * `skipped` with its line number.
 *
 * Import reads with `ndjson`'s strict parse(), which stops at the first line
 * that is not JSON. Everything is validated before anything is written (every
 * line a valid record of one session, and that session new to the target
 * store); then the records are appended in order under a writer lease, the last
 * one durable. A bad line therefore writes nothing.
 */
import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import ndjson from 'ndjson';
import { MendError } from '../errors.js';
import { validateChatRecord } from '../session/record-validation.js';
import type { ChatRecord } from '../session/records.js';
import { canonicalSessionId } from '../session/session-ids.js';
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

export async function exportSession(store: SessionStore, ref: SessionRef, writable: Writable, options: ExportOptions = {}): Promise<ExportResult> {
  const result: ExportResult = { records: 0, reserialized: 0, skipped: [] };
  const out = ndjson.stringify();
  const failed = new Promise<never>((_, reject) => {
    out.once('error', reject);
    writable.once('error', reject);
  });
  failed.catch(() => undefined);
  const finished = options.end === false ? once(out, 'end') : once(writable, 'finish');
  out.pipe(writable, { end: options.end !== false });
  let line = 0;
  for await (const text of storedLines(store, ref)) {
    line++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      result.skipped.push({ line, reason: 'not JSON (torn or damaged line)' });
      continue;
    }
    if (JSON.stringify(value) !== text) result.reserialized++;
    result.records++;
    if (!out.write(value)) await Promise.race([once(out, 'drain'), failed]);
  }
  out.end();
  await Promise.race([finished, failed]);
  return result;
}

/** Records per statement when the store takes batches: large enough to amortize round trips, small enough to keep a statement short. */
const IMPORT_BATCH = 1000;

export interface ImportOptions {
  /** The writer identity the import's lease is taken under. */
  who: WriterIdentity;
}

export interface ImportResult {
  ref: SessionRef;
  records: number;
}

function badLine(line: number, reason: string): MendError {
  return new MendError('malformed_line', `Import stopped at line ${line}: ${reason}; nothing was written`, { line, reason });
}

/** Rows as split2 (under ndjson.parse) cuts them: on \r?\n, empty rows skipped. Returns their 1-based line numbers. */
function nonEmptyRowLines(text: string): number[] {
  const lines: number[] = [];
  text.split(/\r?\n/).forEach((row, i) => {
    if (row) lines.push(i + 1);
  });
  return lines;
}

function firstNonJsonLine(text: string): number {
  const rows = text.split(/\r?\n/);
  for (let i = 0; i < rows.length; i++) {
    if (!rows[i]) continue;
    try {
      JSON.parse(rows[i]!);
    } catch {
      return i + 1;
    }
  }
  return rows.length;
}

/** Parses with ndjson's strict parser; the raw text is kept only to name line numbers. */
async function parseAll(text: string): Promise<unknown[]> {
  const values: unknown[] = [];
  const parser = ndjson.parse({ strict: true });
  return new Promise((resolve, reject) => {
    parser.on('data', (value: unknown) => values.push(value));
    parser.on('error', () => reject(badLine(firstNonJsonLine(text), 'not JSON')));
    parser.on('end', () => resolve(values));
    Readable.from([text]).pipe(parser);
  });
}

async function readAll(readable: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of readable) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function importSession(store: SessionStore, scope: ProjectScope, readable: Readable, options: ImportOptions): Promise<ImportResult> {
  const text = await readAll(readable);
  const values = await parseAll(text);
  const lines = nonEmptyRowLines(text);
  const records: ChatRecord[] = [];
  for (let i = 0; i < values.length; i++) {
    const line = lines[i] ?? i + 1;
    const check = validateChatRecord(values[i]);
    if (!check.ok) throw badLine(line, `not a session record (${check.reason})`);
    if (records.length > 0 && check.record.sessionId !== records[0]!.sessionId) {
      throw badLine(line, `record of session ${check.record.sessionId} in an import of session ${records[0]!.sessionId}`);
    }
    records.push(check.record);
  }
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
    if (lease.appendBatch) {
      for (let i = 0; i < records.length; i += IMPORT_BATCH) {
        const end = Math.min(records.length, i + IMPORT_BATCH);
        await lease.appendBatch(records.slice(i, end), { durable: end === records.length });
      }
    } else {
      for (let i = 0; i < records.length; i++) await lease.append(records[i]!, { durable: i === records.length - 1 });
    }
  } finally {
    await lease.release();
  }
  return { ref, records: records.length };
}
