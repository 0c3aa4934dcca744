/**
 * The outline pass's reader of an ordinary record line, straight from its bytes.
 *
 * JSON.parse makes every string and object of a line, and a Qwen-format line is mostly
 * text, arguments, tool output and telemetry that the outline never reads: making them
 * was most of the pass. This reader checks every byte of the line as JSON (the same
 * grammar JSON.parse accepts: parsing stays the exact check) and keeps only what
 * the outline keeps of a record (outline-columns.ts): byte ranges of its uuid, parent and
 * session id, its type, version kind and flags, and its parts as the tokens of their shape
 * (record-outline.ts) with the ranges of their call and result ids.
 *
 * It is one-sided, like isCertainlyValidRecord (record-validation.ts), whose checks it
 * makes on the bytes: `scan` returns true only for a line that JSON.parse accepts, whose
 * record that check accepts, and whose kept facts are exactly those of the parsed
 * record. Anything it is unsure of returns false, and the caller parses the line as before
 * (outline-pass.ts): a line that is not JSON, nested deeper than it tracks, a record that
 * check would refuse, a repeated key it reads, a key or kept string with an escape or a
 * non-ASCII byte, a part with a key of its own that an object's key order could move.
 * test/session/outline/line-scanner.test.ts holds it: generated, spaced and damaged records and
 * arbitrary bytes in strings, read with the scanner and without it, must give the same
 * outline (a line kept that JSON.parse or the check refuses, or a fact read wrong, differs).
 */
import { CALL, CALL_WITH_ID, PART_END, RESULT, RESULT_WITH_ID, TEXT, TEXT_EMPTY, THOUGHT, NOT_THOUGHT } from './record-outline.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;

/** Per byte inside a string: 0 plain ASCII, 1 the closing quote, 2 a backslash, 3 a control character, 4 not ASCII. */
const IN_STRING = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) IN_STRING[c] = 3;
IN_STRING[QUOTE] = 1;
IN_STRING[BACKSLASH] = 2;
for (let c = 0x80; c < 0x100; c++) IN_STRING[c] = 4;
/** Bytes allowed after a backslash (`u` apart: four hex digits follow). */
const ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPES[c.charCodeAt(0)] = 1;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;
const DIGIT = new Uint8Array(256);
for (let c = 0x30; c <= 0x39; c++) DIGIT[c] = 1;
/** JSON's whitespace. */
const SPACE = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) SPACE[c] = 1;

/**
 * Containers nested deeper than this are left to JSON.parse (a record may nest up to
 * MAX_RECORD_DEPTH, which the full check enforces; ordinary records nest a few levels).
 */
const MAX_DEPTH = 64;

/** Thrown within a scan (never out of it): the line is left to JSON.parse. */
const UNSURE = new Error('line-scanner: unsure');

// Record types, as outline-columns.ts numbers them.
export const TYPE_USER = 0;
export const TYPE_ASSISTANT = 1;
export const TYPE_TOOL_RESULT = 2;
export const TYPE_SYSTEM = 3;

/** What a type-specific value was: absent, what the check accepts, or anything else. */
const ABSENT = 0;
const OK = 1;
const OTHER = 2;

// Top-level keys read, as bits (a repeated one leaves the line to JSON.parse: its last value counts).
const K_UUID = 1 << 0;
const K_PARENT = 1 << 1;
const K_SESSION = 1 << 2;
const K_TIMESTAMP = 1 << 3;
const K_TYPE = 1 << 4;
const K_PROVENANCE = 1 << 5;
const K_CWD = 1 << 6;
const K_VERSION = 1 << 7;
const K_GIT_BRANCH = 1 << 8;
const K_SUBTYPE = 1 << 9;
const K_MESSAGE = 1 << 10;
const K_MODEL = 1 << 11;
const K_USAGE = 1 << 12;
const K_TOOL_RESULT = 1 << 13;
const K_RECOVERY = 1 << 14;
const K_PAYLOAD = 1 << 15;
const K_SIDECHAIN = 1 << 16;
const K_AGENT = 1 << 17;

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const TOP_KEY_LIST: ReadonlyArray<readonly [string, number]> = [
  ['uuid', K_UUID],
  ['parentUuid', K_PARENT],
  ['sessionId', K_SESSION],
  ['timestamp', K_TIMESTAMP],
  ['type', K_TYPE],
  ['provenance', K_PROVENANCE],
  ['cwd', K_CWD],
  ['version', K_VERSION],
  ['gitBranch', K_GIT_BRANCH],
  ['subtype', K_SUBTYPE],
  ['message', K_MESSAGE],
  ['model', K_MODEL],
  ['usageMetadata', K_USAGE],
  ['toolCallResult', K_TOOL_RESULT],
  ['recovery', K_RECOVERY],
  ['systemPayload', K_PAYLOAD],
  ['isSidechain', K_SIDECHAIN],
  ['agentId', K_AGENT],
];
const TOP_COUNT = TOP_KEY_LIST.length;
const TOP_WORDS: readonly Uint8Array[] = TOP_KEY_LIST.map(([key]) => ascii(key));
const TOP_BITS: readonly number[] = TOP_KEY_LIST.map(([, bit]) => bit);
const TYPE_NAMES = ['user', 'assistant', 'tool_result', 'system'].map(ascii);
const MEND_PREFIX = ascii('mend/');
const CHAT_COMPRESSION = ascii('chat_compression');
const W = {
  role: ascii('role'),
  parts: ascii('parts'),
  user: ascii('user'),
  model: ascii('model'),
  text: ascii('text'),
  thought: ascii('thought'),
  functionCall: ascii('functionCall'),
  functionResponse: ascii('functionResponse'),
  id: ascii('id'),
  name: ascii('name'),
  args: ascii('args'),
  response: ascii('response'),
  callId: ascii('callId'),
  status: ascii('status'),
  errorType: ascii('errorType'),
  planId: ascii('planId'),
  synthetic: ascii('synthetic'),
  displayText: ascii('displayText'),
  proto: ascii('__proto__'),
};

/** Short ASCII strings (tool names, part keys) as strings, without making one each time. */
const INTERN_SLOTS = 1024;
const interned: string[] = new Array<string>(INTERN_SLOTS).fill('');

export class LineScanner {
  private buf: Buffer = EMPTY;
  private end = 0;
  /** Set by `string`: the last string had an escape, a non-ASCII byte. */
  private escaped = false;
  private nonAscii = false;
  /** Per top-level key read (TOP_COUNT: the record's start), the one that followed it last time, or -1. */
  private readonly nextKey = new Int8Array(TOP_COUNT + 1).fill(-1);
  /** Open containers of `skip`: 1 an object, 0 an array. */
  private readonly open = new Uint8Array(MAX_DEPTH + 1);
  /** The line's memory as 32-bit words (`content`), and where the line's buffer starts in it. */
  private words: Int32Array = new Int32Array(0);
  private wordsOf: ArrayBufferLike | null = null;
  private base = 0;
  /** Where word reads stop: the line's end, or -1 (none) in a buffer of 2 GiB or more (int32 offsets). */
  private wordEnd = -1;

  // ---- the facts of the last line scanned (valid after `scan` returned true) ----
  type = 0;
  uuidFrom = 0;
  uuidTo = 0;
  /** -1 for a null parent. */
  parentFrom = -1;
  parentTo = -1;
  sessionFrom = 0;
  sessionTo = 0;
  /** 0 no version, 1 mend's, 2 another's (outline-columns.ts provenance). */
  provenance = 0;
  sidechain = false;
  hasCwd = false;
  hasSubtype = false;
  compression = false;
  /** The parts' shape tokens (record-outline.ts partTokens), `tokenCount` of them. */
  readonly tokens: unknown[] = [];
  tokenCount = 0;
  partCount = 0;
  /** Byte ranges of the calls' and results' ids in part order; from -1: the part has no id. */
  idFrom = new Int32Array(16);
  idTo = new Int32Array(16);
  idCount = 0;

  // ---- per line, while scanning ----
  private seen = 0;
  private roleCode = 0;
  private messageState = ABSENT;
  private modelState = ABSENT;
  private usageState = ABSENT;
  private toolResultState = ABSENT;
  private recoveryState = ABSENT;
  private payloadState = ABSENT;
  private sidechainMarker = ABSENT;
  private agent = false;

  /**
   * Scans the line bytes[from, to); true when it is a record the full check accepts and
   * its facts are set, false when the line is left to JSON.parse.
   */
  scan(bytes: Buffer, from: number, to: number): boolean {
    this.buf = bytes;
    this.end = to;
    const memory = bytes.buffer;
    const words = memory.byteLength < 2 ** 31;
    if (memory !== this.wordsOf) {
      this.wordsOf = memory;
      this.words = words ? new Int32Array(memory, 0, memory.byteLength >>> 2) : new Int32Array(0);
    }
    this.base = bytes.byteOffset;
    this.wordEnd = words ? to : -1;
    try {
      let p = this.space(from);
      if (p >= to || bytes[p] !== OPEN_BRACE) return false;
      p = this.record(p);
      return this.space(p) === to && this.accepted();
    } catch (error) {
      if (error === UNSURE) return false;
      throw error;
    } finally {
      this.buf = EMPTY;
    }
  }

  /** What isCertainlyValidRecord asks of the record, from the facts gathered. */
  private accepted(): boolean {
    // record-kinds.ts isSidechainRecord: an explicit marker decides, else a non-empty agentId.
    this.sidechain = this.sidechainMarker === OK || (this.sidechainMarker === ABSENT && this.agent);
    const seen = this.seen;
    // Base fields: uuid, parent (null or a string) and session present; the optional strings were checked as read.
    if ((seen & (K_UUID | K_PARENT | K_SESSION | K_TIMESTAMP | K_TYPE)) !== (K_UUID | K_PARENT | K_SESSION | K_TIMESTAMP | K_TYPE)) return false;
    switch (this.type) {
      case TYPE_USER:
        return this.payloadState !== OTHER && this.messageState === OK && this.roleCode === 1;
      case TYPE_ASSISTANT:
        return this.modelState !== OTHER && this.usageState !== OTHER && this.messageState === OK && this.roleCode === 2;
      case TYPE_TOOL_RESULT:
        return this.toolResultState !== OTHER && this.recoveryState !== OTHER && this.messageState === OK && this.roleCode === 1;
      default:
        return this.hasSubtype;
    }
  }

  private reset(): void {
    this.seen = 0;
    this.type = -1;
    this.parentFrom = this.parentTo = -1;
    this.provenance = 0;
    this.hasCwd = this.hasSubtype = this.compression = false;
    this.tokenCount = this.partCount = this.idCount = 0;
    this.roleCode = 0;
    this.messageState = this.modelState = this.usageState = this.toolResultState = this.recoveryState = this.payloadState = ABSENT;
    this.sidechainMarker = ABSENT;
    this.agent = false;
  }

  /** The record object at `p`; returns where it ends. */
  private record(p: number): number {
    this.reset();
    const b = this.buf;
    p = this.space(p + 1);
    if (b[p] === CLOSE_BRACE) return p + 1;
    // Lines of a log write their keys in the same order: the key that followed this one
    // last time is tried first, by its bytes, before the key is scanned and looked up.
    let previous = TOP_COUNT;
    for (;;) {
      if (b[p] !== QUOTE) throw UNSURE;
      let k = this.nextKey[previous]!;
      const end = k >= 0 ? this.keyIs(p, TOP_WORDS[k]!) : -1;
      if (end > 0) p = end;
      else {
        const keyFrom = p + 1;
        p = this.string(p);
        // An escaped key may spell one of those read; a non-ASCII one cannot.
        if (this.escaped) throw UNSURE;
        k = this.nonAscii ? -1 : topKey(b, keyFrom, p - 1 - keyFrom);
        if (k >= 0) this.nextKey[previous] = k;
      }
      const bit = k >= 0 ? TOP_BITS[k]! : 0;
      if (k >= 0) previous = k;
      if ((this.seen & bit) !== 0) throw UNSURE;
      this.seen |= bit;
      p = this.space(p);
      if (b[p] !== COLON) throw UNSURE;
      p = this.space(p + 1);
      p = bit === 0 ? this.skip(p, 1) : this.topValue(bit, p);
      p = this.space(p);
      const c = b[p];
      if (c === CLOSE_BRACE) return p + 1;
      if (c !== COMMA) throw UNSURE;
      p = this.space(p + 1);
    }
  }

  /**
   * Where the key at `p` (its opening quote) ends when it is `word` itself, else -1. Such a
   * key needs no other check: its bytes are plain ASCII letters.
   */
  private keyIs(p: number, word: Uint8Array): number {
    const b = this.buf;
    const n = word.length;
    const close = p + 1 + n;
    if (close >= this.end || b[close] !== QUOTE) return -1;
    for (let i = 0; i < n; i++) if (b[p + 1 + i] !== word[i]) return -1;
    return close + 1;
  }

  /** The value of a top-level key read (`bit`) at `p`; returns where it ends. */
  private topValue(bit: number, p: number): number {
    const b = this.buf;
    const c = b[p];
    const isString = c === QUOTE;
    switch (bit) {
      case K_UUID:
      case K_SESSION:
      case K_PARENT: {
        if (bit === K_PARENT && c === 0x6e) return this.literal(p, 'null');
        if (!isString) throw UNSURE;
        const end = this.string(p);
        if (this.escaped || this.nonAscii || end - p === 2) throw UNSURE;
        if (bit === K_UUID) {
          this.uuidFrom = p + 1;
          this.uuidTo = end - 1;
        } else if (bit === K_SESSION) {
          this.sessionFrom = p + 1;
          this.sessionTo = end - 1;
        } else {
          this.parentFrom = p + 1;
          this.parentTo = end - 1;
        }
        return end;
      }
      case K_TYPE: {
        if (!isString) throw UNSURE;
        const end = this.string(p);
        if (this.escaped) throw UNSURE;
        let type = 0;
        while (type < TYPE_NAMES.length && !same(b, p + 1, end - 1, TYPE_NAMES[type]!)) type++;
        if (type === TYPE_NAMES.length) throw UNSURE;
        this.type = type;
        return end;
      }
      case K_TIMESTAMP:
      case K_PROVENANCE:
      case K_GIT_BRANCH:
      case K_CWD:
        // Strings the check only types (cwd: read again from the full record when asked for).
        if (!isString) throw UNSURE;
        if (bit === K_CWD) this.hasCwd = true;
        return this.content(p);
      case K_VERSION: {
        if (!isString) throw UNSURE;
        const end = this.content(p);
        if (this.escaped) throw UNSURE;
        this.provenance = startsWith(b, p + 1, end - 1, MEND_PREFIX) ? 1 : 2;
        return end;
      }
      case K_SUBTYPE: {
        if (!isString) throw UNSURE;
        const end = this.content(p);
        if (this.escaped) throw UNSURE;
        this.hasSubtype = true;
        this.compression = same(b, p + 1, end - 1, CHAT_COMPRESSION);
        return end;
      }
      case K_MODEL:
        this.modelState = isString ? OK : OTHER;
        return this.skip(p, 1);
      case K_USAGE:
        this.usageState = c === OPEN_BRACE ? OK : OTHER;
        return this.skip(p, 1);
      case K_SIDECHAIN:
        this.sidechainMarker = c === 0x74 ? OK : OTHER;
        return this.skip(p, 1);
      case K_AGENT: {
        const end = this.skip(p, 1);
        this.agent = isString && end - p > 2;
        return end;
      }
      case K_MESSAGE:
        if (c !== OPEN_BRACE) {
          this.messageState = OTHER;
          return this.skip(p, 1);
        }
        return this.message(p);
      case K_TOOL_RESULT:
      case K_RECOVERY:
      case K_PAYLOAD:
        if (c !== OPEN_BRACE) {
          if (bit === K_TOOL_RESULT) this.toolResultState = OTHER;
          else if (bit === K_RECOVERY) this.recoveryState = OTHER;
          else this.payloadState = OTHER;
          return this.skip(p, 1);
        }
        return this.checkedObject(bit, p);
      default:
        throw UNSURE;
    }
  }

  /**
   * toolCallResult (callId and status strings, errorType a string or absent), recovery
   * (planId a string, synthetic true) or systemPayload (displayText a string or absent).
   */
  private checkedObject(bit: number, p: number): number {
    const b = this.buf;
    // Bits: 1 callId / planId ok, 2 status / synthetic ok, 4 a value the check refuses; 8, 16, 32: key seen.
    let state = 0;
    p = this.space(p + 1);
    if (b[p] !== CLOSE_BRACE) {
      for (;;) {
        const keyFrom = p + 1;
        p = this.key(p);
        const keyTo = p - 1;
        p = this.space(p);
        if (b[p] !== COLON) throw UNSURE;
        p = this.space(p + 1);
        const c = b[p];
        let which = 0;
        if (bit === K_TOOL_RESULT)
          which = same(b, keyFrom, keyTo, W.callId) ? 1 : same(b, keyFrom, keyTo, W.status) ? 2 : same(b, keyFrom, keyTo, W.errorType) ? 3 : 0;
        else if (bit === K_RECOVERY) which = same(b, keyFrom, keyTo, W.planId) ? 1 : same(b, keyFrom, keyTo, W.synthetic) ? 2 : 0;
        else which = same(b, keyFrom, keyTo, W.displayText) ? 3 : 0;
        if (which !== 0) {
          if ((state & (8 << (which - 1))) !== 0 || this.escaped) throw UNSURE;
          state |= 8 << (which - 1);
          const ok = bit === K_RECOVERY && which === 2 ? c === 0x74 : c === QUOTE;
          if (ok && which < 3) state |= which;
          else if (!ok) state |= 4;
        } else if (this.escaped) throw UNSURE;
        p = this.skip(p, 2);
        p = this.space(p);
        const d = b[p];
        if (d === CLOSE_BRACE) break;
        if (d !== COMMA) throw UNSURE;
        p = this.space(p + 1);
      }
    }
    const refused = (state & 4) !== 0;
    if (bit === K_PAYLOAD) this.payloadState = refused ? OTHER : OK;
    else {
      const ok = !refused && (state & 3) === 3 ? OK : OTHER;
      if (bit === K_TOOL_RESULT) this.toolResultState = ok;
      else this.recoveryState = ok;
    }
    return p + 1;
  }

  /** The message object at `p`: its role and its parts. */
  private message(p: number): number {
    const b = this.buf;
    let sawRole = false;
    let sawParts = false;
    let partsOk = false;
    p = this.space(p + 1);
    if (b[p] !== CLOSE_BRACE) {
      for (;;) {
        const keyFrom = p + 1;
        p = this.key(p);
        const keyTo = p - 1;
        if (this.escaped) throw UNSURE;
        p = this.space(p);
        if (b[p] !== COLON) throw UNSURE;
        p = this.space(p + 1);
        if (same(b, keyFrom, keyTo, W.role)) {
          if (sawRole) throw UNSURE;
          sawRole = true;
          if (b[p] === QUOTE) {
            const end = this.string(p);
            this.roleCode = this.escaped ? 3 : same(b, p + 1, end - 1, W.user) ? 1 : same(b, p + 1, end - 1, W.model) ? 2 : 3;
            p = end;
          } else {
            this.roleCode = 3;
            p = this.skip(p, 2);
          }
        } else if (same(b, keyFrom, keyTo, W.parts)) {
          if (sawParts) throw UNSURE;
          sawParts = true;
          partsOk = b[p] === OPEN_BRACKET;
          p = partsOk ? this.parts(p) : this.skip(p, 2);
        } else p = this.skip(p, 2);
        p = this.space(p);
        const c = b[p];
        if (c === CLOSE_BRACE) break;
        if (c !== COMMA) throw UNSURE;
        p = this.space(p + 1);
      }
    }
    this.messageState = sawRole && partsOk ? OK : OTHER;
    return p + 1;
  }

  /** The parts array at `p`. */
  private parts(p: number): number {
    const b = this.buf;
    p = this.space(p + 1);
    if (b[p] === CLOSE_BRACKET) return p + 1;
    for (;;) {
      // A part that is not an object fails the check (left to it, to report).
      if (b[p] !== OPEN_BRACE) throw UNSURE;
      p = this.space(this.part(p));
      this.partCount++;
      const c = b[p];
      if (c === CLOSE_BRACKET) return p + 1;
      if (c !== COMMA) throw UNSURE;
      p = this.space(p + 1);
    }
  }

  /** One part: its keys as shape tokens, in order, and its call's or result's id. */
  private part(p: number): number {
    const b = this.buf;
    // Bits of the part's keys read: text 1, thought 2, functionCall 4, functionResponse 8.
    let keys = 0;
    const firstToken = this.tokenCount;
    p = this.space(p + 1);
    if (b[p] !== CLOSE_BRACE) {
      for (;;) {
        const keyFrom = p + 1;
        p = this.key(p);
        const keyTo = p - 1;
        if (this.escaped || this.nonAscii) throw UNSURE;
        p = this.space(p);
        if (b[p] !== COLON) throw UNSURE;
        p = this.space(p + 1);
        const c = b[p];
        if (same(b, keyFrom, keyTo, W.text)) {
          if ((keys & 1) !== 0 || c !== QUOTE) throw UNSURE;
          keys |= 1;
          const end = this.content(p);
          this.token(end - p === 2 ? TEXT_EMPTY : TEXT);
          p = end;
        } else if (same(b, keyFrom, keyTo, W.thought)) {
          if ((keys & 2) !== 0) throw UNSURE;
          keys |= 2;
          if (c === 0x74) p = this.literal(p, 'true');
          else if (c === 0x66) p = this.literal(p, 'false');
          else throw UNSURE;
          this.token(c === 0x74 ? THOUGHT : NOT_THOUGHT);
        } else if (same(b, keyFrom, keyTo, W.functionCall) || same(b, keyFrom, keyTo, W.functionResponse)) {
          const isCall = b[keyFrom + 8] === 0x43; // 'C' of functionCall, 'R' of functionResponse
          // One call or result a part: with both, their ids' order is not the keys' (record-outline.ts SLOT_KEYS).
          if (keys >= 4 || c !== OPEN_BRACE) throw UNSURE;
          keys |= isCall ? 4 : 8;
          p = this.slot(p, isCall);
        } else {
          // Any other key is a token of its own; an integer-like key would move in an object's key order.
          const k = b[keyFrom];
          if (keyTo === keyFrom || DIGIT[k!] === 1 || same(b, keyFrom, keyTo, W.proto)) throw UNSURE;
          const name = internAscii(b, keyFrom, keyTo);
          for (let t = firstToken; t < this.tokenCount; t++) if (this.tokens[t] === name) throw UNSURE;
          this.token(name);
          p = this.skip(p, 5);
        }
        p = this.space(p);
        const d = b[p];
        if (d === CLOSE_BRACE) break;
        if (d !== COMMA) throw UNSURE;
        p = this.space(p + 1);
      }
    }
    this.token(PART_END);
    return p + 1;
  }

  /** A functionCall or functionResponse object: its name (a token) and id; args or response an object. */
  private slot(p: number, isCall: boolean): number {
    const b = this.buf;
    let idFrom = -1;
    let idTo = -1;
    let hasId = false;
    let name: string | null = null;
    let payloadOk = isCall; // args may be absent; response may not
    let sawPayload = false;
    p = this.space(p + 1);
    if (b[p] !== CLOSE_BRACE) {
      for (;;) {
        const keyFrom = p + 1;
        p = this.key(p);
        const keyTo = p - 1;
        if (this.escaped) throw UNSURE;
        p = this.space(p);
        if (b[p] !== COLON) throw UNSURE;
        p = this.space(p + 1);
        const c = b[p];
        if (same(b, keyFrom, keyTo, W.id)) {
          if (hasId || c !== QUOTE) throw UNSURE;
          hasId = true;
          const end = this.string(p);
          // An empty call id counts as none for the repair (model-entry.ts keepsModelEntry): left to JSON.parse.
          if (this.escaped || this.nonAscii || (isCall && end - p === 2)) throw UNSURE;
          idFrom = p + 1;
          idTo = end - 1;
          p = end;
        } else if (same(b, keyFrom, keyTo, W.name)) {
          if (name !== null || c !== QUOTE) throw UNSURE;
          const end = this.string(p);
          if (this.escaped || this.nonAscii) throw UNSURE;
          name = internAscii(b, p + 1, end - 1);
          p = end;
        } else if (same(b, keyFrom, keyTo, isCall ? W.args : W.response)) {
          if (sawPayload) throw UNSURE;
          sawPayload = true;
          payloadOk = c === OPEN_BRACE;
          p = this.skip(p, 6);
        } else p = this.skip(p, 6);
        p = this.space(p);
        const d = b[p];
        if (d === CLOSE_BRACE) break;
        if (d !== COMMA) throw UNSURE;
        p = this.space(p + 1);
      }
    }
    if (name === null || !payloadOk) throw UNSURE;
    this.token(isCall ? (hasId ? CALL_WITH_ID : CALL) : hasId ? RESULT_WITH_ID : RESULT);
    this.token(name);
    const n = this.idCount++;
    if (n === this.idFrom.length) {
      this.idFrom = grow(this.idFrom);
      this.idTo = grow(this.idTo);
    }
    this.idFrom[n] = idFrom;
    this.idTo[n] = idTo;
    return p + 1;
  }

  private token(t: unknown): void {
    this.tokens[this.tokenCount++] = t;
  }

  // ---- JSON ----

  /** Past whitespace at `p`: none, in lines JSON.stringify wrote, so that case is one test. */
  private space(p: number): number {
    return SPACE[this.buf[p]!] === 1 ? this.spaces(p) : p;
  }

  private spaces(p: number): number {
    const b = this.buf;
    const end = this.end;
    while (p < end && SPACE[b[p]!] === 1) p++;
    return p;
  }

  /** A key at `p` (a string); returns where it ends. */
  private key(p: number): number {
    if (this.buf[p] !== QUOTE) throw UNSURE;
    return this.string(p);
  }

  /**
   * The string at `p` (its opening quote), checked; returns past its closing quote. Sets
   * `escaped` and `nonAscii` (a kept string must be plain ASCII). Four bytes at a time
   * where aligned and none is special, as in `content`, non-ASCII bytes counting as special.
   */
  private string(p: number): number {
    const b = this.buf;
    const end = this.end;
    const words = this.words;
    const base = this.base;
    const wordEnd = this.wordEnd;
    let escaped = false;
    let nonAscii = false;
    p++;
    for (;;) {
      if (((base + p) & 3) === 0) {
        while (p + 4 <= wordEnd) {
          const w = words[(base + p) >> 2]!;
          const q = w ^ 0x22222222;
          const s = w ^ 0x5c5c5c5c;
          if ((((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s) | ((w - 0x20202020) & ~w) | w) & 0x80808080) break;
          p += 4;
        }
      }
      if (p >= end) throw UNSURE;
      const kind = IN_STRING[b[p++]!]!;
      if (kind === 0) continue;
      if (kind === 1) break;
      if (kind === 4) nonAscii = true;
      else if (kind === 3) throw UNSURE;
      else {
        escaped = true;
        if (p >= end) throw UNSURE;
        const e = b[p++]!;
        if (e === 0x75) {
          if (p + 4 > end || HEX[b[p]!] === 0 || HEX[b[p + 1]!] === 0 || HEX[b[p + 2]!] === 0 || HEX[b[p + 3]!] === 0) throw UNSURE;
          p += 4;
        } else if (ESCAPES[e] === 0) throw UNSURE;
      }
    }
    this.escaped = escaped;
    this.nonAscii = nonAscii;
    return p;
  }

  /**
   * A string whose characters are not kept (texts, outputs, keys and values only skipped):
   * checked like `string`, but four bytes at a time where none of them is a quote, a
   * backslash or a control character (most of a line's bytes: this loop is most of the
   * scan). Sets `escaped`; returns past the closing quote. `string`'s loop, written out a
   * second time on purpose: a shared helper for the word loop or the escape measured 5-18%
   * slower on the scan (a call per run of bytes).
   */
  private content(p: number): number {
    const b = this.buf;
    const end = this.end;
    const words = this.words;
    const base = this.base;
    const wordEnd = this.wordEnd;
    let escaped = false;
    p++;
    for (;;) {
      if (((base + p) & 3) === 0) {
        while (p + 4 <= wordEnd) {
          const w = words[(base + p) >> 2]!;
          const q = w ^ 0x22222222;
          const s = w ^ 0x5c5c5c5c;
          // Whether a byte is 0x22, 0x5c or below 0x20 (bytes from 0x80 on are plain here): exact
          // answers of the zero-byte and less-than-byte tests (no borrow crosses a byte without one).
          if ((((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s) | ((w - 0x20202020) & ~w)) & 0x80808080) break;
          p += 4;
        }
      }
      if (p >= end) throw UNSURE;
      const kind = IN_STRING[b[p++]!]!;
      if (kind === 0 || kind === 4) continue;
      if (kind === 1) break;
      if (kind === 3) throw UNSURE;
      escaped = true;
      if (p >= end) throw UNSURE;
      const e = b[p++]!;
      if (e === 0x75) {
        if (p + 4 > end || HEX[b[p]!] === 0 || HEX[b[p + 1]!] === 0 || HEX[b[p + 2]!] === 0 || HEX[b[p + 3]!] === 0) throw UNSURE;
        p += 4;
      } else if (ESCAPES[e] === 0) throw UNSURE;
    }
    this.escaped = escaped;
    return p;
  }

  private literal(p: number, word: string): number {
    const b = this.buf;
    if (p + word.length > this.end) throw UNSURE;
    for (let i = 0; i < word.length; i++) if (b[p + i] !== word.charCodeAt(i)) throw UNSURE;
    return p + word.length;
  }

  /** JSON's number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private number(p: number): number {
    const b = this.buf;
    const end = this.end;
    if (b[p] === MINUS) p++;
    if (p >= end) throw UNSURE;
    if (b[p] === 0x30) p++;
    else if (DIGIT[b[p]!] === 1) while (p < end && DIGIT[b[p]!] === 1) p++;
    else throw UNSURE;
    if (p < end && b[p] === 0x2e) {
      p++;
      if (p >= end || DIGIT[b[p]!] !== 1) throw UNSURE;
      while (p < end && DIGIT[b[p]!] === 1) p++;
    }
    if (p < end && (b[p] === 0x65 || b[p] === 0x45)) {
      p++;
      if (p < end && (b[p] === 0x2b || b[p] === MINUS)) p++;
      if (p >= end || DIGIT[b[p]!] !== 1) throw UNSURE;
      while (p < end && DIGIT[b[p]!] === 1) p++;
    }
    return p;
  }

  /**
   * Any JSON value at `p`, nested at `depth` (the record is 1), checked and not kept;
   * returns where it ends. Containers with a stack of their kinds, not recursion.
   */
  private skip(p: number, depth: number): number {
    const b = this.buf;
    const open = this.open;
    let n = 0;
    for (;;) {
      // At the start of a value.
      if (p >= this.end) throw UNSURE;
      let c = b[p]!;
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth + n >= MAX_DEPTH) throw UNSURE;
        const isObject = c === OPEN_BRACE;
        p = this.space(p + 1);
        if (b[p] === (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) p++;
        else {
          open[n++] = isObject ? 1 : 0;
          if (isObject) {
            if (b[p] !== QUOTE) throw UNSURE;
            p = this.space(this.content(p));
            if (b[p] !== COLON) throw UNSURE;
            p = this.space(p + 1);
          }
          continue;
        }
      } else if (c === QUOTE) p = this.content(p);
      else if (c === 0x74) p = this.literal(p, 'true');
      else if (c === 0x66) p = this.literal(p, 'false');
      else if (c === 0x6e) p = this.literal(p, 'null');
      else p = this.number(p);
      // After a value: a comma, or the end of its container.
      for (;;) {
        if (n === 0) return p;
        p = this.space(p);
        c = b[p]!;
        const isObject = open[n - 1] === 1;
        if (c === COMMA) {
          p = this.space(p + 1);
          if (isObject) {
            if (b[p] !== QUOTE) throw UNSURE;
            p = this.space(this.content(p));
            if (b[p] !== COLON) throw UNSURE;
            p = this.space(p + 1);
          }
          break;
        }
        if (c !== (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) throw UNSURE;
        p++;
        n--;
      }
    }
  }
}

const EMPTY = Buffer.alloc(0);

function grow(a: Int32Array): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(a.length * 2);
  bigger.set(a);
  return bigger;
}

/** Whether bytes[from, to) are `word`. */
function same(b: Buffer, from: number, to: number, word: Uint8Array): boolean {
  if (to - from !== word.length) return false;
  for (let i = 0; i < word.length; i++) if (b[from + i] !== word[i]) return false;
  return true;
}

function startsWith(b: Buffer, from: number, to: number, word: Uint8Array): boolean {
  if (to - from < word.length) return false;
  for (let i = 0; i < word.length; i++) if (b[from + i] !== word[i]) return false;
  return true;
}

/** The index of a top-level key read (TOP_KEY_LIST), or -1 for any other key (`length`: of its bytes at `from`). */
function topKey(b: Buffer, from: number, length: number): number {
  for (let k = 0; k < TOP_COUNT; k++) if (same(b, from, from + length, TOP_WORDS[k]!)) return k;
  return -1;
}

/** The ASCII string of bytes[from, to), from a small cache when it was made before. */
function internAscii(b: Buffer, from: number, to: number): string {
  let h = to - from;
  for (let i = from; i < to; i++) h = (Math.imul(h, 31) + b[i]!) | 0;
  const slot = h & (INTERN_SLOTS - 1);
  const known = interned[slot]!;
  if (known.length === to - from) {
    let i = 0;
    while (i < known.length && known.charCodeAt(i) === b[from + i]) i++;
    if (i === known.length) return known;
  }
  const made = b.toString('latin1', from, to);
  interned[slot] = made;
  return made;
}
