/**
 * Streams a session log into validated, fragment-merged records. Data problems
 * (torn tail, garbage lines, invalid records, foreign session ids) come back as
 * diagnostics; only I/O failures throw.
 *
 * Lines come from the one line splitter (wire/line-splitter.ts): newlines are found
 * on raw bytes, so a 100 MB log is never held as one string, and each line is decoded
 * on its own. Only parsed records are kept.
 *
 * Torn tail: the file does not end with '\n' and its last line does not parse.
 * A last line that parses is a complete record that merely lacks its newline.
 * A whitespace-only last line is blank, like any other.
 */
import { MendError } from '../errors.js';
import type { LoadDiagnostic, ReadRecord } from './conversation.js';
import { DEFAULT_BLOCK_SIZE, bytesLines, readFileLines, type LineBlocksEnd } from './line-blocks.js';
import { isBlank, viewText, type OnLine } from '../wire/line-splitter.js';
import { mergePieces } from './record-merge.js';
import { MAX_RECORD_DEPTH } from './nesting-depth.js';
import { isCertainlyValidRecord, validateChatRecord } from './record-validation.js';
import type { ChatRecord } from './records.js';
import type { ReadResult } from '../store/session-reads.js';

export type { ReadResult } from '../store/session-reads.js';
export { isBlank, lineText } from '../wire/line-splitter.js';

export interface ReadOptions {
  /** Read chunk size; tests shrink it to exercise lines that span chunks. */
  chunkSize?: number;
  /** The session id the file name gives (`<uuid>.jsonl`): it wins over the records' majority. */
  fileSessionId?: string;
}

const NEWLINE = 0x0a;

/** One valid record line, before the session is chosen and fragments are merged; becomes its ReadRecord. */
type RecordLine = ReadRecord;

/**
 * The pieces read for one uuid that has more than one line, merged once at the end
 * (linear in the number of pieces). A uuid read once needs none of this: its line
 * object becomes its ReadRecord as it is (one allocation per record, as before).
 */
interface Group {
  pieces: ChatRecord[];
  /**
   * Hash of the JSON of every piece kept so far -> their indexes in `pieces`. Hashes,
   * not the JSON itself: keeping the JSON of 400k pieces made the garbage collector
   * the larger part of reading them.
   */
  seen: Map<number, number[]>;
}

/** Records per session id, to choose the session once every line is known. */
export class SessionTally {
  /** Records per session id, in first-seen order (Map keeps insertion order). */
  private readonly counts = new Map<string, number>();
  private runId: string | null = null;
  private runLength = 0;

  /** Runs of one id are counted locally: a Map lookup per line hashed every fresh id string. */
  add(sessionId: string, records = 1): void {
    if (sessionId !== this.runId) {
      this.flushRun();
      this.runId = sessionId;
    }
    this.runLength += records;
  }

  /** The counts so far, in first-seen order (to be added to another tally of the lines before). */
  entries(): [string, number][] {
    this.flushRun();
    return [...this.counts];
  }

  private flushRun(): void {
    if (this.runId !== null) this.counts.set(this.runId, (this.counts.get(this.runId) ?? 0) + this.runLength);
    this.runId = null;
    this.runLength = 0;
  }

  /**
   * The session's id: the file name's when it is a session id that some record
   * carries (a file copied under another name still shows its records), else the
   * id most records carry (the first seen on a tie), so one foreign line cannot
   * hide a session.
   */
  choose(fileSessionId: string | undefined): string | null {
    this.flushRun();
    if (fileSessionId !== undefined && this.counts.has(fileSessionId)) return fileSessionId;
    let best: string | null = null;
    let bestCount = 0;
    for (const [id, count] of this.counts) {
      if (count > bestCount) {
        best = id;
        bestCount = count;
      }
    }
    return best;
  }
}

/**
 * Accumulates valid record lines and the diagnostics of damaged ones. The session
 * and the fragments are sorted out at the end (finish), once every line is known:
 * the session is the file name's id or the majority's, which the first line cannot tell.
 */
export class LogAccumulator {
  private readonly lines: RecordLine[] = [];
  readonly diagnostics: LoadDiagnostic[] = [];
  private readonly tally = new SessionTally();

  /** Handles one complete line; returns false when it did not parse as JSON. */
  addLine(text: string, line: number): boolean {
    const record = checkLine(text, line, this.diagnostics);
    if (record === MALFORMED) return false;
    if (record !== INVALID) {
      this.tally.add(record.sessionId);
      this.lines.push({ line, record });
    }
    return true;
  }

  finish(fileSessionId: string | undefined): { records: ReadRecord[]; diagnostics: LoadDiagnostic[]; sessionId: string | null } {
    const sessionId = this.tally.choose(fileSessionId);
    const diagnostics = this.diagnostics;
    // Until the end, records[i].record is the first piece of its uuid (what later pieces
    // are compared with); uuids with more pieces are merged after the loop.
    const records: ReadRecord[] = [];
    const groups = new Map<number, Group>();
    const byUuid = new UuidIndex((index) => records[index]!.record.uuid);
    for (const entry of this.lines) {
      const { line, record } = entry;
      if (record.sessionId !== sessionId) {
        diagnostics.push({ code: 'mixed_session_id', line, sessionId: record.sessionId });
        continue;
      }
      const at = byUuid.findOrAdd(record.uuid, records.length);
      if (at < 0) {
        records.push(entry);
        continue;
      }
      const kept = records[at]!;
      const first = kept.record;
      // Whatever this line is, it is the uuid's latest line: the leaf is the record of the last line.
      kept.lastLine = line;
      if (record.type !== first.type) {
        // Another record under a used uuid: merging would put e.g. a user's question
        // inside a model entry. The first keeps the uuid; this one is reported whole.
        diagnostics.push({ code: 'conflicting_uuid', line, uuid: record.uuid, keptType: first.type, type: record.type, record });
        continue;
      }
      let group = groups.get(at);
      if (group === undefined) {
        group = { pieces: [first], seen: new Map([[hashString(JSON.stringify(first)), [0]]]) };
        groups.set(at, group);
      }
      const json = JSON.stringify(record);
      const hash = hashString(json);
      const sameHash = group.seen.get(hash);
      // Equal hashes are confirmed on the JSON itself (collisions cost time, never correctness).
      if (sameHash?.some((i) => JSON.stringify(group.pieces[i]) === json)) {
        // The same line written twice is one record: merging it would send a prompt twice.
        diagnostics.push({ code: 'repeated_line', line, uuid: record.uuid });
        continue;
      }
      if (sameHash) sameHash.push(group.pieces.length);
      else group.seen.set(hash, [group.pieces.length]);
      if (record.parentUuid !== first.parentUuid) {
        diagnostics.push({
          code: 'conflicting_parent_uuid',
          line,
          uuid: record.uuid,
          keptParentUuid: first.parentUuid,
          parentUuid: record.parentUuid,
        });
      }
      group.pieces.push(record);
    }
    for (const [at, group] of groups) records[at]!.record = mergePieces(group.pieces);
    // Line order, as a reader going through the file would report them (stable sort).
    diagnostics.sort((a, b) => lineOf(a) - lineOf(b));
    return { records, diagnostics, sessionId };
  }
}

export const MALFORMED = 0;
export const INVALID = 1;

/**
 * The checks every line gets, in one place for the full read and the index pass: JSON
 * (MALFORMED when it does not parse), nesting depth and the record schema (INVALID,
 * with its diagnostic pushed); else the record.
 */
export function checkLine(text: string, line: number, diagnostics: LoadDiagnostic[]): ChatRecord | typeof MALFORMED | typeof INVALID {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return MALFORMED;
  }
  if (text.length >= MIN_TOO_DEEP_LENGTH && nestedDeeperThan(value, MAX_RECORD_DEPTH)) {
    diagnostics.push({ code: 'invalid_record', line, reason: `nested deeper than ${MAX_RECORD_DEPTH} levels` });
    return INVALID;
  }
  // validateChatRecord runs the same fast check first; calling it directly spares
  // a result object per record on the common path.
  if (isCertainlyValidRecord(value)) return value;
  const check = validateChatRecord(value);
  if (!check.ok) {
    diagnostics.push({ code: 'invalid_record', line, reason: check.reason });
    return INVALID;
  }
  return check.record;
}

/**
 * checkLine's common case alone, with no diagnostic: the record when the text parses, is
 * not too deep and passes the schema's fast check, else undefined (the caller then runs
 * checkLine on the line as UTF-8, which says what is wrong). The outline pass calls it on
 * lines decoded as latin1 (outline-pass.ts): JSON accepts the same lines however their
 * non-ASCII bytes decode, and none of these checks reads a string's non-ASCII characters.
 */
export function quickCheckLine(text: string): ChatRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (text.length >= MIN_TOO_DEEP_LENGTH && nestedDeeperThan(value, MAX_RECORD_DEPTH)) return undefined;
  return isCertainlyValidRecord(value) ? value : undefined;
}

function lineOf(d: LoadDiagnostic): number {
  return 'line' in d ? d.line : Number.MAX_SAFE_INTEGER;
}

/**
 * A value nested deeper than MAX_RECORD_DEPTH has MAX_RECORD_DEPTH + 1 nested
 * containers, each written with an opening and a closing bracket: a shorter line
 * cannot hold one (a tighter bound than isTooDeep's, which walks every line of
 * 256+ characters, i.e. almost every record).
 */
const MIN_TOO_DEEP_LENGTH = 2 * (MAX_RECORD_DEPTH + 1);

/**
 * Same answer as nesting-depth.ts's isTooDeep(value, length, max), without its
 * allocations: isTooDeep queues a [node, depth] pair and an Object.values array
 * per object, about a sixth of the reader's time on a log of small records.
 * Only JSON.parse output reaches this (plain objects and arrays holding own data
 * properties, whose prototype is Object.prototype even for a `"__proto__"` key), and
 * recursion stops at max + 1 levels.
 */
function nestedDeeperThan(value: unknown, max: number): boolean {
  // for-in also visits inherited enumerable keys, which Object.values (isTooDeep) does not.
  // JSON.parse's objects inherit only Object.prototype's, and it has none unless something
  // added one: only then is each key checked to be the object's own (a third of the walk).
  return walkDeeperThan(value, max, 1, inheritsEnumerableKeys());
}

function inheritsEnumerableKeys(): boolean {
  for (const _ in EMPTY) return true;
  return false;
}

const EMPTY = {};

function walkDeeperThan(value: unknown, max: number, depth: number, ownOnly: boolean): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth > max) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (typeof child === 'object' && child !== null && walkDeeperThan(child, max, depth + 1, ownOnly)) return true;
    }
    return false;
  }
  const obj = value as Record<string, unknown>;
  for (const key in obj) {
    if (ownOnly && !Object.hasOwn(obj, key)) continue;
    const child = obj[key];
    if (typeof child === 'object' && child !== null && walkDeeperThan(child, max, depth + 1, ownOnly)) return true;
  }
  return false;
}

/**
 * uuid -> index of the record with that uuid, to find fragments. A
 * Map<string, number> cost about 0.7 us per record on the benchmark machine
 * (mostly V8 hashing each fresh uuid string), 7% of load+plan on a log of small
 * records; this open-addressing table over typed arrays, with its own hash, costs
 * less than half of that. Hash-equal slots are confirmed by comparing the uuids
 * themselves, so collisions cost time, never correctness; a lookup that probes
 * too long (many colliding uuids, e.g. crafted ones) moves everything into a Map
 * for the rest of the read, so it is never much worse than the Map alone.
 */
class UuidIndex {
  private slots = new Int32Array(1 << 10); // record index + 1; 0: empty
  private hashes = new Int32Array(1 << 10);
  private count = 0;
  private map: Map<string, number> | null = null;

  constructor(private readonly uuidAt: (index: number) => string) {}

  /** The index already stored for `uuid`, or -1 after storing `index` for it. */
  findOrAdd(uuid: string, index: number): number {
    if (this.map !== null) {
      const at = this.map.get(uuid);
      if (at !== undefined) return at;
      this.map.set(uuid, index);
      return -1;
    }
    const hash = hashString(uuid);
    const mask = this.slots.length - 1;
    let i = hash & mask;
    for (let probes = 0; this.slots[i] !== 0; probes++) {
      if (this.hashes[i] === hash && this.uuidAt(this.slots[i]! - 1) === uuid) return this.slots[i]! - 1;
      if (probes === MAX_PROBES) {
        this.map = new Map();
        for (let j = 0; j < this.slots.length; j++) if (this.slots[j] !== 0) this.map.set(this.uuidAt(this.slots[j]! - 1), this.slots[j]! - 1);
        return this.findOrAdd(uuid, index);
      }
      i = (i + 1) & mask;
    }
    this.slots[i] = index + 1;
    this.hashes[i] = hash;
    if (++this.count * 2 > this.slots.length) this.grow();
    return -1;
  }

  private grow(): void {
    const { slots, hashes } = this;
    this.slots = new Int32Array(slots.length * 2);
    this.hashes = new Int32Array(slots.length * 2);
    const mask = this.slots.length - 1;
    for (let j = 0; j < slots.length; j++) {
      if (slots[j] === 0) continue;
      let i = hashes[j]! & mask;
      while (this.slots[i] !== 0) i = (i + 1) & mask;
      this.slots[i] = slots[j]!;
      this.hashes[i] = hashes[j]!;
    }
  }
}

const MAX_PROBES = 64;

/** FNV-1a over UTF-16 code units, then murmur3's finalizer to spread the low bits. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export async function readSessionLog(path: string, options: ReadOptions = {}): Promise<ReadResult> {
  return readLines((onLine) => readFileLines(path, onLine, options.chunkSize ?? DEFAULT_BLOCK_SIZE), options, path);
}

/**
 * The reader over bytes in memory, through the same block reads a file read runs
 * (tests read thousands of truncations without temp files and without mocking fs).
 */
export function readSessionBytes(bytes: Buffer, options: ReadOptions = {}): Promise<ReadResult> {
  return readLines((onLine) => bytesLines(bytes, onLine, options.chunkSize ?? DEFAULT_BLOCK_SIZE), options, '<memory>');
}

async function readLines(split: (onLine: OnLine) => Promise<LineBlocksEnd>, options: ReadOptions, path: string): Promise<ReadResult> {
  const acc = new LogAccumulator();
  let lines = 0;
  let end: LineBlocksEnd;
  try {
    end = await split((view) => {
      lines = view.number;
      const text = viewText(view);
      if (isBlank(text) || acc.addLine(text, view.number)) return;
      // The bytes after the last '\n' that do not parse: the torn remains of a write cut
      // short by a crash (a last line that parses merely lacks its newline).
      acc.diagnostics.push(view.terminated ? { code: 'malformed_line', line: view.number } : { code: 'torn_tail', line: view.number, bytes: view.length });
    });
  } catch (error) {
    throw toReadError(path, error);
  }
  const { records, diagnostics, sessionId } = acc.finish(options.fileSessionId);
  return {
    records,
    diagnostics,
    sessionId,
    bytes: end.bytes,
    endsWithNewline: end.lastByte === NEWLINE,
    lines,
  };
}

export function toReadError(path: string, error: unknown): MendError {
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

/**
 * The same validation, fragment merging and diagnostics for records that a store
 * keeps one per row, exactly as written (a database cannot tear a line, so there
 * is no torn tail). `position` is the row's sequence number.
 */
export async function readRecordLines(
  rows: AsyncIterable<{ position: number; text: string }> | Iterable<{ position: number; text: string }>,
  options: { fileSessionId?: string } = {},
): Promise<ReadResult> {
  const acc = new LogAccumulator();
  let bytes = 0;
  let lines = 0;
  for await (const { position, text } of rows) {
    bytes += Buffer.byteLength(text) + 1;
    lines++;
    if (!isBlank(text) && !acc.addLine(text, position)) acc.diagnostics.push({ code: 'malformed_line', line: position });
  }
  const { records, diagnostics, sessionId } = acc.finish(options.fileSessionId);
  return { records, diagnostics, sessionId, bytes, endsWithNewline: lines > 0, lines };
}
