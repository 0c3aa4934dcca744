/**
 * A session's outline held as columns: per valid record line its position,
 * byte range, uuid and parent, type, the flags the loader reads (sidechain, model
 * entry, checkpoint, who wrote it), cwd, subtype and its parts as a shared template
 * plus ids (record-outline.ts). No object per record: at 1M records every object and
 * repeated string costs tens of megabytes the outline pass exists to save.
 */
import { isModelEntry, keepsModelEntry } from '../model-entry.js';
import { IdPool, StringTable, grow, type IdsData } from './outline-pools.js';
import { PartsOutliner, partsOf, type PartsShape, type PartsTemplate } from './record-outline.js';
import { TYPE_ASSISTANT, TYPE_SYSTEM, type LineScanner } from './line-scanner.js';
import { UuidTable, uuidBytesToWords, uuidToWords, wordsToUuid } from './uuid-words.js';
import { SystemSubtype, isMendVersion, isSidechainRecord } from '../record-kinds.js';
import type { ChatRecord, Part, RecordType } from '../records.js';

const TYPES: readonly RecordType[] = ['user', 'assistant', 'tool_result', 'system'];
const SIDECHAIN = 1;
const MODEL = 2;
const COMPRESSION = 4;
const KEEPS_MODEL = 8;
// A cwd or a subtype is read from the full record when asked for (rarely: the recovery
// line's project check, the index): a column each was 8 MB at 1M records.
const HAS_CWD = 16;
const HAS_SUBTYPE = 32;
// How a record names its uuid and parent (links column).
const ODD_UUID = 1;
const PARENT_NULL = 2;
/** The parent is the uuid of the kept line just before. */
const PARENT_PREVIOUS = 4;
/** The parent is in `otherParents`. */
const PARENT_OTHER = 8;

/** The columns of an outline pass as a message to another thread (OutlineColumns.data and .append). */
export interface ColumnsData {
  length: number;
  lineNos: Int32Array;
  starts: Uint32Array | Float64Array;
  lengths: Int32Array;
  uuidWords: Uint32Array;
  links: Uint8Array;
  types: Uint8Array;
  flags: Uint8Array;
  provenance: Uint8Array;
  sessions: Int32Array;
  templates: Int32Array;
  idsAt: Int32Array;
  oddUuids: Map<number, string>;
  otherParents: Map<number, string>;
  strings: string[];
  /** The outliner's templates from index 1 on (0 is every outliner's empty template). */
  partsTemplates: PartsTemplate[];
  ids: IdsData;
}

/** The buffers of a ColumnsData to transfer rather than copy. */
export function columnsTransfer(data: ColumnsData): ArrayBuffer[] {
  const arrays = [data.lineNos, data.starts, data.lengths, data.uuidWords, data.links, data.types, data.flags, data.provenance];
  arrays.push(data.sessions, data.templates, data.idsAt, data.ids.starts, data.ids.ends, data.ids.bytes);
  return arrays.map((a) => a.buffer as ArrayBuffer);
}

export class OutlineColumns {
  length = 0;
  lineNos = new Int32Array(1024);
  /** Byte offset of each line: 32-bit for a file under 4 GiB (the usual case), else 64-bit. */
  starts: Uint32Array | Float64Array;
  /** Byte length of each line (without its newline). */
  lengths = new Int32Array(1024);
  uuidWords = new Uint32Array(4096);
  links = new Uint8Array(1024);
  types = new Uint8Array(1024);
  flags = new Uint8Array(1024);
  provenance = new Uint8Array(1024);
  /** Needed only until the session is chosen (OutlineColumns.release). */
  sessions = new Int32Array(1024);
  templates = new Int32Array(1024);
  idsAt = new Int32Array(1024);
  readonly oddUuids = new Map<number, string>();
  readonly otherParents = new Map<number, string>();
  readonly strings = new StringTable();
  readonly ids = new IdPool();
  readonly outliner = new PartsOutliner();
  /** What partsShape hands out, reused. */
  private readonly shape = new ShapeCursor(this.ids);
  /** `fileBytes`: the size of what is read (offsets need 64 bits from 4 GiB on). */
  constructor(fileBytes: number) {
    this.starts = fileBytes < 2 ** 32 ? new Uint32Array(1024) : new Float64Array(1024);
  }

  /**
   * The uuid of the last line pushed: the usual parent of the next. Undefined: that line's
   * uuid as the columns hold it (pushScanned makes no string of it); null: none.
   */
  private previousUuid: string | null | undefined = null;
  /** Per template: MODEL and KEEPS_MODEL of an assistant record of that shape (pushScanned). */
  private readonly modelFlags: number[] = [];
  private readonly addId = (id: string | undefined): void => this.ids.add(id);

  /** Room for `lines` lines (an estimate from the file's size), so the columns need not grow by doubling. */
  reserve(lines: number, ids: number, idBytes: number): void {
    if (lines > this.lineNos.length) this.resize(lines);
    this.ids.reserve(ids, idBytes);
  }

  /** Frees what only the outline pass itself needed. */
  release(): void {
    this.sessions = new Int32Array(0);
  }

  push(record: ChatRecord, line: number, start: number, end: number): void {
    const i = this.length++;
    if (i === this.lineNos.length) this.resize(i * 2);
    this.pushAt(i, record, line, start, end);
  }

  private resize(n: number): void {
    this.lineNos = grow(this.lineNos, n, (m) => new Int32Array(m));
    this.starts = this.starts instanceof Uint32Array ? grow(this.starts, n, (m) => new Uint32Array(m)) : grow(this.starts, n, (m) => new Float64Array(m));
    this.lengths = grow(this.lengths, n, (m) => new Int32Array(m));
    this.uuidWords = grow(this.uuidWords, 4 * n, (m) => new Uint32Array(m));
    this.links = grow(this.links, n, (m) => new Uint8Array(m));
    this.types = grow(this.types, n, (m) => new Uint8Array(m));
    this.flags = grow(this.flags, n, (m) => new Uint8Array(m));
    this.provenance = grow(this.provenance, n, (m) => new Uint8Array(m));
    this.sessions = grow(this.sessions, n, (m) => new Int32Array(m));
    this.templates = grow(this.templates, n, (m) => new Int32Array(m));
    this.idsAt = grow(this.idsAt, n, (m) => new Int32Array(m));
  }

  private pushAt(i: number, record: ChatRecord, line: number, start: number, end: number): void {
    this.lineNos[i] = line;
    // A file that grew past 4 GiB while it was read: 64-bit offsets from here on.
    if (start >= 2 ** 32 && this.starts instanceof Uint32Array) this.starts = Float64Array.from(this.starts);
    this.starts[i] = start;
    this.lengths[i] = end - start;
    let links = 0;
    if (!uuidToWords(record.uuid, this.uuidWords, 4 * i)) {
      links |= ODD_UUID;
      this.oddUuids.set(i, record.uuid);
    }
    const parent = record.parentUuid;
    const previous = this.previousUuid === undefined ? this.uuid(i - 1) : this.previousUuid;
    if (parent === null) links |= PARENT_NULL;
    else if (parent === previous) links |= PARENT_PREVIOUS;
    else {
      links |= PARENT_OTHER;
      this.otherParents.set(i, parent);
    }
    this.previousUuid = record.uuid;
    this.links[i] = links;
    // Session id and cwd are almost always those of the line before: compared first, not hashed.
    this.sessions[i] = this.strings.of(record.sessionId, i > 0 ? this.sessions[i - 1]! : -1);

    this.types[i] = TYPES.indexOf(record.type);
    this.provenance[i] = provenanceOf(record);
    this.flags[i] = flagsOf(record);
    this.idsAt[i] = this.ids.count;
    this.templates[i] = record.type === 'system' ? -1 : this.outliner.template(record.message.parts, this.addId).index;
  }

  /**
   * Pushes the record line-scanner.ts read from `bytes`: the same columns `push` makes of
   * the parsed record (test/session/outline/line-scanner.test.ts). False, and nothing pushed, when
   * no record of its parts' shape was pushed before: the caller then parses the line and
   * pushes the record, which adds the shape.
   */
  pushScanned(scan: LineScanner, bytes: Buffer, line: number, start: number, end: number): boolean {
    let template = -1;
    if (scan.type !== TYPE_SYSTEM) {
      const found = this.outliner.find(scan.tokens, scan.tokenCount, scan.partCount);
      if (found === null) return false;
      template = found.index;
    }
    const i = this.length++;
    if (i === this.lineNos.length) this.resize(i * 2);
    this.lineNos[i] = line;
    if (start >= 2 ** 32 && this.starts instanceof Uint32Array) this.starts = Float64Array.from(this.starts);
    this.starts[i] = start;
    this.lengths[i] = end - start;
    let links = 0;
    if (!uuidBytesToWords(bytes, scan.uuidFrom, scan.uuidTo, this.uuidWords, 4 * i)) {
      links |= ODD_UUID;
      this.oddUuids.set(i, asciiText(bytes, scan.uuidFrom, scan.uuidTo));
    }
    if (scan.parentFrom < 0) links |= PARENT_NULL;
    else if (this.parentIsPrevious(bytes, scan.parentFrom, scan.parentTo, i)) links |= PARENT_PREVIOUS;
    else {
      links |= PARENT_OTHER;
      this.otherParents.set(i, asciiText(bytes, scan.parentFrom, scan.parentTo));
    }
    this.previousUuid = undefined;
    this.links[i] = links;
    const hint = i > 0 ? this.sessions[i - 1]! : -1;
    this.sessions[i] =
      hint >= 0 && sameText(bytes, scan.sessionFrom, scan.sessionTo, this.strings.list[hint]!)
        ? hint
        : this.strings.of(asciiText(bytes, scan.sessionFrom, scan.sessionTo));
    this.types[i] = scan.type;
    this.provenance[i] = scan.provenance;
    let flags = scan.sidechain ? SIDECHAIN : 0;
    if (scan.type === TYPE_ASSISTANT) flags |= this.modelFlagsOf(template);
    if (scan.type === TYPE_SYSTEM && scan.compression) flags |= COMPRESSION;
    if (scan.hasCwd) flags |= HAS_CWD;
    if (scan.hasSubtype) flags |= HAS_SUBTYPE;
    this.flags[i] = flags;
    this.idsAt[i] = this.ids.count;
    this.templates[i] = template;
    if (template >= 0) {
      for (let n = 0; n < scan.idCount; n++) {
        const from = scan.idFrom[n]!;
        if (from < 0) this.ids.add(undefined);
        else this.ids.addBytes(bytes, from, scan.idTo[n]!);
      }
    }
    return true;
  }

  /** Whether the parent in bytes[from, to) is the uuid of line i - 1, the last pushed. */
  private parentIsPrevious(bytes: Buffer, from: number, to: number, i: number): boolean {
    const previous = this.previousUuid;
    if (previous === null) return false;
    if (previous !== undefined) return sameText(bytes, from, to, previous);
    if ((this.links[i - 1]! & ODD_UUID) !== 0) return sameText(bytes, from, to, this.oddUuids.get(i - 1)!);
    // A canonical uuid is equal to a string only if that string is canonical with the same words.
    const words = this.parentWords;
    if (!uuidBytesToWords(bytes, from, to, words, 0)) return false;
    const w = this.uuidWords;
    const a = 4 * (i - 1);
    return w[a] === words[0] && w[a + 1] === words[1] && w[a + 2] === words[2] && w[a + 3] === words[3];
  }

  private readonly parentWords = new Uint32Array(4);

  /** MODEL and KEEPS_MODEL of an assistant record with template t: they follow from its shape. */
  private modelFlagsOf(t: number): number {
    let flags = this.modelFlags[t];
    if (flags === undefined) {
      // The blank parts answer as the record's own: their ids are never empty (an empty call
      // id is left to the parsed path, line-scanner.ts), their other values reduced alike.
      const parts = this.outliner.blankParts(t);
      flags = isModelEntry(parts) ? MODEL | (keepsModelEntry(parts) ? KEEPS_MODEL : 0) : 0;
      this.modelFlags[t] = flags;
    }
    return flags;
  }

  /** The columns as a message (OutlinePass.data); this object is not used after. */
  data(): ColumnsData {
    return {
      length: this.length,
      lineNos: this.lineNos,
      starts: this.starts,
      lengths: this.lengths,
      uuidWords: this.uuidWords,
      links: this.links,
      types: this.types,
      flags: this.flags,
      provenance: this.provenance,
      sessions: this.sessions,
      templates: this.templates,
      idsAt: this.idsAt,
      oddUuids: this.oddUuids,
      otherParents: this.otherParents,
      strings: this.strings.list,
      partsTemplates: this.outliner.list.slice(1),
      ids: this.ids.data(),
    };
  }

  /**
   * Appends the columns of a pass over the lines right after these (their line numbers
   * shifted by `lineBase`); the ids, strings and templates they refer to are renumbered.
   */
  append(other: ColumnsData, lineBase: number): void {
    const base = this.length;
    const n = other.length;
    if (base + n > this.lineNos.length) this.resize(base + n);
    if (other.starts instanceof Float64Array && this.starts instanceof Uint32Array) this.starts = Float64Array.from(this.starts);
    for (let i = 0; i < n; i++) this.lineNos[base + i] = other.lineNos[i]! + lineBase;
    this.starts.set(other.starts.subarray(0, n), base);
    this.lengths.set(other.lengths.subarray(0, n), base);
    this.uuidWords.set(other.uuidWords.subarray(0, 4 * n), 4 * base);
    this.links.set(other.links.subarray(0, n), base);
    this.types.set(other.types.subarray(0, n), base);
    this.flags.set(other.flags.subarray(0, n), base);
    this.provenance.set(other.provenance.subarray(0, n), base);
    const stringAt = other.strings.map((s) => this.strings.of(s));
    for (let i = 0; i < n; i++) this.sessions[base + i] = stringAt[other.sessions[i]!]!;
    const templateBase = this.outliner.adopt(other.partsTemplates) - 1;
    const idBase = this.ids.count;
    for (let i = 0; i < n; i++) {
      const t = other.templates[i]!;
      this.templates[base + i] = t <= 0 ? t : t + templateBase;
      this.idsAt[base + i] = other.idsAt[i]! + idBase;
    }
    this.ids.append(other.ids);
    for (const [i, uuid] of other.oddUuids) this.oddUuids.set(i + base, uuid);
    for (const [i, parent] of other.otherParents) this.otherParents.set(i + base, parent);
    this.length += n;
    // The next line pushed, if any, does not follow the appended ones' last uuid as read here.
    this.previousUuid = null;
  }

  type(i: number): RecordType {
    return TYPES[this.types[i]!]!;
  }

  isCompression(i: number): boolean {
    return (this.flags[i]! & COMPRESSION) !== 0;
  }

  isSidechain(i: number): boolean {
    return (this.flags[i]! & SIDECHAIN) !== 0;
  }

  isModel(i: number): boolean {
    return (this.flags[i]! & MODEL) !== 0;
  }

  /** A model entry that stays one after the repair (model-entry.ts keepsModelEntry). */
  keepsModelEntry(i: number): boolean {
    return (this.flags[i]! & KEEPS_MODEL) !== 0;
  }

  /** Whether the record names a cwd (read from the full record when asked for). */
  hasCwd(i: number): boolean {
    return (this.flags[i]! & HAS_CWD) !== 0;
  }

  hasSubtype(i: number): boolean {
    return (this.flags[i]! & HAS_SUBTYPE) !== 0;
  }

  /** The number of parts of line i (0 for a system record). */
  partCount(i: number): number {
    const t = this.templates[i]!;
    return t < 0 ? 0 : this.outliner.at(t).parts.length;
  }

  uuid(i: number): string {
    return (this.links[i]! & ODD_UUID) !== 0 ? this.oddUuids.get(i)! : wordsToUuid(this.uuidWords, 4 * i);
  }

  /** Line i's uuid as uuidToWords's words in `out[0...3]`, without making its string; false when it is not canonical. */
  uuidWordsOf(i: number, out: Uint32Array): boolean {
    if ((this.links[i]! & ODD_UUID) !== 0) return false;
    const w = this.uuidWords;
    out[0] = w[4 * i]!;
    out[1] = w[4 * i + 1]!;
    out[2] = w[4 * i + 2]!;
    out[3] = w[4 * i + 3]!;
    return true;
  }

  parentUuid(i: number): string | null {
    const links = this.links[i]!;
    if ((links & PARENT_NULL) !== 0) return null;
    if ((links & PARENT_PREVIOUS) !== 0) return this.uuid(i - 1);
    return this.otherParents.get(i)!;
  }

  /** Whether line j's uuid is line i's parent. */
  isParent(i: number, j: number): boolean {
    const links = this.links[i]!;
    if ((links & PARENT_NULL) !== 0) return false;
    if ((links & PARENT_PREVIOUS) !== 0) {
      if (j === i - 1) return true;
      if (((this.links[i - 1]! | this.links[j]!) & ODD_UUID) === 0) {
        const w = this.uuidWords;
        const a = 4 * (i - 1);
        const b = 4 * j;
        return w[a] === w[b] && w[a + 1] === w[b + 1] && w[a + 2] === w[b + 2] && w[a + 3] === w[b + 3];
      }
    }
    return this.parentUuid(i) === this.uuid(j);
  }

  sessionId(i: number): string {
    return this.strings.list[this.sessions[i]!]!;
  }

  /** A table of the uuids of the lines added to it (UuidTable.findOrAdd). */
  uuidTable(expected: number): UuidTable {
    return new UuidTable(
      () => this.uuidWords,
      (i) => (this.links[i]! & ODD_UUID) === 0,
      (i) => this.uuid(i),
      expected,
    );
  }

  /** The outline parts of line i, or null for a system record. */
  outlineParts(i: number): readonly Part[] | null {
    const t = this.templates[i]!;
    return t < 0 ? null : partsOf(this.outliner.at(t), (j) => this.ids.at(j), this.idsAt[i]!);
  }

  /**
   * Line i's parts as a PartsShape, or null for a system record. The object is reused:
   * it holds line i's ids until the next call.
   */
  partsShape(i: number): PartsShape | null {
    const t = this.templates[i]!;
    if (t < 0) return null;
    const shape = this.shape;
    shape.parts = this.outliner.blankParts(t);
    shape.base = this.idsAt[i]!;
    return shape;
  }

  /** The ids of the calls and of the results of line i, as RecordIndexEntry holds them. */
  callAndResultIds(i: number): { callIds: string[]; resultIds: string[] } {
    const callIds: string[] = [];
    const resultIds: string[] = [];
    const t = this.templates[i]!;
    if (t >= 0) {
      let next = this.idsAt[i]!;
      for (const part of this.outliner.at(t).parts) {
        if (typeof part['functionCall'] === 'object' && part['functionCall'] !== null) callIds.push(this.ids.at(next++) ?? '');
        if (typeof part['functionResponse'] === 'object' && part['functionResponse'] !== null) resultIds.push(this.ids.at(next++) ?? '');
      }
    }
    return { callIds, resultIds };
  }
}

/** A line's PartsShape (OutlineColumns.partsShape): its template's blank parts, its ids from the pool. */
class ShapeCursor implements PartsShape {
  parts: readonly Part[] = [];
  base = 0;
  constructor(private readonly ids: IdPool) {}

  id(n: number): string | undefined {
    return this.ids.at(this.base + n);
  }
}

/**
 * Whether every string pushAt keeps of `record` is ASCII: its uuid, parent and session
 * id, and of its parts (record-outline.ts) every key and each call's and result's name
 * and id. Everything else pushAt reads it only compares with ASCII constants, tests for
 * emptiness or checks the type of, which gives the same answer however the record's
 * non-ASCII bytes were decoded. The outline pass parses lines decoded as latin1 (much
 * cheaper than UTF-8) and keeps such a record only when this holds; any other record is
 * parsed again from its UTF-8 (outline-pass.ts). A string kept here without being checked
 * here would be wrong, not slow: test/session/outline/outline-latin1.test.ts puts non-ASCII text
 * in every string and key of generated records to catch that.
 *
 * `known` holds strings already found ASCII (the last record's uuid and session id): the
 * usual parent and session id equal them and need no second look.
 */
export function keepsOnlyAscii(record: ChatRecord, known: AsciiStrings): boolean {
  if (!isAscii(record.uuid)) return false;
  const session = record.sessionId;
  if (session !== known.sessionId && !isAscii(session)) return false;
  const parent = record.parentUuid;
  if (parent !== null && parent !== known.uuid && !isAscii(parent)) return false;
  if (record.type === 'system') return true;
  const parts = record.message.parts;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Record<string, unknown> | undefined;
    if (part === undefined) continue;
    for (const key in part) {
      if (!Object.hasOwn(part, key)) continue;
      if (key === 'text' || key === 'thought' || key === 'thoughtSignature') continue;
      if (key !== 'functionCall' && key !== 'functionResponse') {
        if (!isAscii(key)) return false;
        continue;
      }
      const slot = part[key];
      if (typeof slot !== 'object' || slot === null) continue;
      const { name, id } = slot as { name?: unknown; id?: unknown };
      if (!keptValueIsAscii(name) || (Object.hasOwn(slot, 'id') && !keptValueIsAscii(id))) return false;
    }
  }
  return true;
}

/** Strings found ASCII before (keepsOnlyAscii), or null. */
export interface AsciiStrings {
  uuid: string | null;
  sessionId: string | null;
}

/** A name or id as the outline keeps it: a string as it is, an object as its JSON. */
function keptValueIsAscii(value: unknown): boolean {
  if (typeof value === 'string') return isAscii(value);
  if (typeof value !== 'object' || value === null) return true;
  return isAscii(JSON.stringify(value));
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** A string the line scanner kept the range of (ASCII: it made sure). */
function asciiText(bytes: Buffer, from: number, to: number): string {
  return bytes.toString('latin1', from, to);
}

/** Whether bytes[from, to) (ASCII) spell `s`. */
function sameText(bytes: Buffer, from: number, to: number, s: string): boolean {
  if (to - from !== s.length) return false;
  for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) !== bytes[from + k]) return false;
  return true;
}

function provenanceOf(record: ChatRecord): 0 | 1 | 2 {
  return record.version === undefined ? 0 : isMendVersion(record.version) ? 1 : 2;
}

function flagsOf(record: ChatRecord): number {
  let flags = isSidechainRecord(record) ? SIDECHAIN : 0;
  if (record.type === 'assistant' && isModelEntry(record.message.parts)) {
    flags |= MODEL;
    if (keepsModelEntry(record.message.parts)) flags |= KEEPS_MODEL;
  }
  if (record.type === 'system' && record.subtype === SystemSubtype.chatCompression) flags |= COMPRESSION;
  if (typeof record.cwd === 'string') flags |= HAS_CWD;
  if (typeof record.subtype === 'string') flags |= HAS_SUBTYPE;
  return flags;
}
