/**
 * fast-check arbitraries and byte helpers for the property tests: API histories
 * with colliding, missing and empty call ids, corpus mutations (garbage lines
 * with invalid UTF-8, shuffles, duplicates) and ndjson streams for the framer.
 */
import fc from 'fast-check';
import type { ChatRecord, Content, Part } from '../../src/session/records.js';

// ---- API histories -----------------------------------------------------------------------

/** A small pool so that ids collide often: duplicate calls, duplicate and early results. */
export const CALL_IDS = ['c1', 'c2', 'c3', 'c4'] as const;

/** An id, missing (undefined: the key is left out) or empty. */
export const callIdArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...CALL_IDS) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant('') },
);

const toolNameArb = fc.constantFrom('run_shell_command', 'read_file', 'edit');
/** Unique enough to tell recorded results apart. */
const outputArb = fc.string({ maxLength: 6 });

function withId<T extends object>(id: string | undefined, rest: T): T & { id?: string } {
  return id === undefined ? rest : { id, ...rest };
}

export const callPartArb: fc.Arbitrary<Part> = fc
  .record({ id: callIdArb, name: toolNameArb, command: fc.string({ maxLength: 4 }) })
  .map(({ id, name, command }) => ({ functionCall: withId(id, { name, args: { command } }) }));

export const resultPartArb: fc.Arbitrary<Part> = fc
  .record({ id: callIdArb, name: toolNameArb, output: outputArb })
  .map(({ id, name, output }) => ({ functionResponse: withId(id, { name, response: { output } }) }));

export const textPartArb: fc.Arbitrary<Part> = fc.string({ maxLength: 8 }).map((text) => ({ text }));

/** Every part shape the records schema allows, weighted towards what real logs hold. */
export function partArb(role: 'user' | 'model'): fc.Arbitrary<Part> {
  return fc.oneof(
    { weight: role === 'model' ? 8 : 2, arbitrary: callPartArb },
    { weight: role === 'user' ? 8 : 1, arbitrary: resultPartArb },
    { weight: 4, arbitrary: textPartArb },
    { weight: 1, arbitrary: fc.string({ maxLength: 4 }).map((text): Part => ({ text, thought: true })) },
    { weight: 1, arbitrary: fc.constant<Part>({ inlineData: { mimeType: 'image/png', data: 'AAAA' } }) },
    { weight: 1, arbitrary: fc.constant<Part>({}) },
    // Empty leftovers: nothing but a signature, thought:false or an empty text.
    { weight: 1, arbitrary: fc.constantFrom<Part>({ thoughtSignature: 'c2ln' }, { thought: false }, { text: '' }, { text: '', thoughtSignature: 'c2ln' }) },
    // Schema-valid oddities: text beside a call, a call and a result in one part.
    { weight: 1, arbitrary: fc.tuple(textPartArb, callPartArb).map(([t, c]): Part => ({ ...t, ...c })) },
    { weight: 1, arbitrary: fc.tuple(callPartArb, resultPartArb).map(([c, r]): Part => ({ ...c, ...r })) },
  );
}

export const contentArb: fc.Arbitrary<Content> = fc
  .constantFrom('user' as const, 'model' as const)
  .chain((role) => fc.array(partArb(role), { maxLength: 4 }).map((parts): Content => ({ role, parts })));

/** Arbitrary sequences of user/model entries: missing and duplicate ids, results before calls, etc. */
export const historyArb: fc.Arbitrary<Content[]> = fc.array(contentArb, { maxLength: 10 });

/** Only the shapes a well-behaved writer produces (one call or result per part), still with id collisions. */
export const plainHistoryArb: fc.Arbitrary<Content[]> = fc.array(
  fc.oneof(
    fc.array(fc.oneof({ weight: 3, arbitrary: callPartArb }, textPartArb), { minLength: 1, maxLength: 3 }).map((parts): Content => ({ role: 'model', parts })),
    fc.array(fc.oneof({ weight: 3, arbitrary: resultPartArb }, textPartArb), { minLength: 1, maxLength: 3 }).map((parts): Content => ({ role: 'user', parts })),
  ),
  { maxLength: 10 },
);

// ---- session records (the loader's input) ------------------------------------------------

const SESSION = '11111111-2222-4333-8444-555555555555';

/** One record of a generated session, before uuids and parents are assigned. */
type RecordSketch = Omit<ChatRecord, 'uuid' | 'parentUuid' | 'sessionId' | 'timestamp'>;

/** A model entry holding nothing but thoughts (mend writes one when SIGINT lands while the model thinks). */
const thoughtOnlyArb: fc.Arbitrary<Part[]> = fc.array(
  fc.oneof(
    fc.string({ maxLength: 6 }).map((text): Part => ({ text, thought: true })),
    fc.constant<Part>({ thoughtSignature: 'c2ln' }),
  ),
  { minLength: 1, maxLength: 2 },
);

const entryRecordArb: fc.Arbitrary<RecordSketch> = fc.oneof(
  { weight: 4, arbitrary: fc.array(partArb('user'), { maxLength: 4 }).map((parts): RecordSketch => ({ type: 'user', message: { role: 'user', parts } })) },
  {
    weight: 3,
    arbitrary: fc
      .array(resultPartArb, { minLength: 1, maxLength: 3 })
      .map((parts): RecordSketch => ({ type: 'tool_result', message: { role: 'user', parts } })),
  },
  {
    weight: 5,
    arbitrary: fc.array(partArb('model'), { maxLength: 4 }).map((parts): RecordSketch => ({ type: 'assistant', message: { role: 'model', parts } })),
  },
  { weight: 1, arbitrary: thoughtOnlyArb.map((parts): RecordSketch => ({ type: 'assistant', message: { role: 'model', parts } })) },
);

const markerRecordArb: fc.Arbitrary<RecordSketch> = fc.oneof(
  fc
    .constantFrom('sigint', 'sigterm', 'interrupt', 'bogus')
    .map((reason): RecordSketch => ({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason } })),
  fc
    .oneof(fc.record({ code: fc.constantFrom('provider_error', 'max_turns'), message: fc.string({ maxLength: 6 }) }), fc.constant({ code: 7 }))
    .map((payload): RecordSketch => ({ type: 'system', subtype: 'turn_failed', systemPayload: payload })),
  fc
    .oneof(
      fc
        .constantFrom('synthesized_tool_result', 'quarantined_tool_output')
        .map((type) => ({ planId: 'rp_0', kind: 'interrupted_turn', repairs: [{ type }], timestamp: 't' })),
      fc.constant(42),
    )
    .map((payload): RecordSketch => ({ type: 'system', subtype: 'recovery', systemPayload: payload })),
  fc.constant<RecordSketch>({ type: 'system', subtype: 'ui_telemetry', systemPayload: {} }),
);

/**
 * The active chain of a generated session: entries (thought-only and empty assistant
 * records included), markers (turn_aborted, turn_failed, recovery with unknown repair
 * types or bad payloads) and now and then a subagent's record (isSidechain), linked
 * one after the other. Versions make the tail mend's or a peer's.
 */
export const sessionRecordsArb: fc.Arbitrary<ChatRecord[]> = fc
  .record({
    sketches: fc.array(fc.oneof({ weight: 6, arbitrary: entryRecordArb }, { weight: 2, arbitrary: markerRecordArb }), { maxLength: 12 }),
    sidechain: fc.array(fc.boolean(), { maxLength: 12 }),
    peer: fc.boolean(),
  })
  .map(({ sketches, sidechain, peer }) => {
    let parent: string | null = null;
    return sketches.map((sketch, i): ChatRecord => {
      const side = sidechain[i] === true && sketch.type !== 'system';
      const uuid = `r${i}`;
      const record = {
        uuid,
        parentUuid: side ? null : parent,
        sessionId: SESSION,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        version: peer ? '0.24.4' : 'mend/0.1.0',
        ...sketch,
        ...(side ? { isSidechain: true, agentId: 'sub1' } : {}),
      } as ChatRecord;
      if (!side) parent = uuid;
      return record;
    });
  });

// ---- bytes and lines ---------------------------------------------------------------------

/** Byte sequences that are not valid UTF-8 (and a few valid but awkward ones). */
export const INVALID_UTF8_PIECES: readonly number[][] = [
  [0xff],
  [0xfe, 0xff],
  [0xc3], // lone lead byte
  [0x80], // lone continuation byte
  [0xe2, 0x82], // truncated 3-byte sequence
  [0xf0, 0x9f, 0x98], // truncated 4-byte sequence
  [0xed, 0xa0, 0x80], // a UTF-16 surrogate encoded in UTF-8
  [0xc0, 0xaf], // overlong '/'
  [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
  [0x00],
  [0x0d], // a stray CR
  [...Buffer.from('\u2028\ufeff😀', 'utf8')],
];

/** Garbage for one line: random bytes, invalid UTF-8, JSON fragments and non-record JSON; never a '\n'. */
export const garbageLineArb: fc.Arbitrary<Buffer> = fc
  .array(
    fc.oneof(
      fc.uint8Array({ maxLength: 24 }).map((b) => [...b]),
      fc.constantFrom(...INVALID_UTF8_PIECES),
      fc.constantFrom('{', '}', '"', '{"uuid":"u1",', 'null', '[]', '{}', '1', '{"type":"user"}').map((s) => [...Buffer.from(s)]),
    ),
    { maxLength: 6 },
  )
  .map((pieces) => Buffer.from(pieces.flat().map((b) => (b === 0x0a ? 0x20 : b))));

/** The lines of a log without their '\n' (a final line without one included), plus whether it ended with one. */
export function splitLines(buf: Buffer): { lines: Buffer[]; finalNewline: boolean } {
  const lines: Buffer[] = [];
  let start = 0;
  for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
    lines.push(buf.subarray(start, nl));
    start = nl + 1;
  }
  if (start < buf.length) lines.push(buf.subarray(start));
  return { lines, finalNewline: buf.length > 0 && buf[buf.length - 1] === 0x0a };
}

export function joinLines(lines: readonly Buffer[], finalNewline = true): Buffer {
  const out: Buffer[] = [];
  lines.forEach((line, i) => {
    out.push(line);
    if (i < lines.length - 1 || finalNewline) out.push(Buffer.from('\n'));
  });
  return Buffer.concat(out);
}

/** Cuts a buffer at the given offsets (any order, out-of-range ones clamped). */
export function cutAt(buf: Buffer, offsets: readonly number[]): Buffer[] {
  const sorted = offsets.map((o) => Math.max(0, Math.min(buf.length, o))).sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let prev = 0;
  for (const o of sorted) {
    chunks.push(buf.subarray(prev, o));
    prev = o;
  }
  chunks.push(buf.subarray(prev));
  return chunks;
}

// ---- ndjson streams ----------------------------------------------------------------------

/** One line of a stream-json input: a JSON value, garbage (invalid UTF-8 too) or a blank line. */
export const streamLineArb: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v))) },
  {
    weight: 2,
    arbitrary: fc
      .record({ text: fc.string({ unit: 'grapheme', maxLength: 12 }), n: fc.integer() })
      .map((v) => Buffer.from(JSON.stringify({ type: 'user', message: { role: 'user', content: v.text }, n: v.n }))),
  },
  { weight: 2, arbitrary: garbageLineArb },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\t', '\r', ' \r').map((s) => Buffer.from(s)) },
);

/** Lines joined by '\n' or '\r\n', with or without a final terminator. */
export const streamArb: fc.Arbitrary<Buffer> = fc
  .record({
    lines: fc.array(fc.tuple(streamLineArb, fc.boolean()), { maxLength: 12 }),
    terminated: fc.boolean(),
  })
  .map(({ lines, terminated }) =>
    Buffer.concat(lines.flatMap(([line, crlf], i) => (i < lines.length - 1 || terminated ? [line, Buffer.from(crlf ? '\r\n' : '\n')] : [line]))),
  );

/**
 * A log (say a corpus session) as a crash or a careless copy leaves it: its lines in order
 * or shuffled, some repeated, one replaced by garbage, cut anywhere; read at some block size.
 */
export function damagedLogArb(logs: readonly Buffer[]): fc.Arbitrary<{ bytes: Buffer; chunkSize: number }> {
  return fc.constantFrom(...logs.filter((b) => b.length > 0)).chain((log) => {
    const { lines, finalNewline } = splitLines(log);
    return fc
      .record({
        order: fc.shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length }),
        dups: fc.array(fc.nat({ max: lines.length - 1 }), { maxLength: 3 }),
        garbage: fc.option(fc.tuple(fc.nat(), garbageLineArb)),
        cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
        chunkSize: fc.constantFrom(1, 5, 64, 4096, 1 << 16),
        shuffle: fc.boolean(),
      })
      .map(({ order, dups, garbage, cut, chunkSize, shuffle }) => {
        const picked = shuffle ? [...order] : [...lines];
        for (const i of dups) picked.push(picked[i % picked.length]!);
        if (garbage) picked[garbage[0] % picked.length] = garbage[1];
        let bytes = joinLines(picked, finalNewline);
        if (cut !== null) bytes = bytes.subarray(0, Math.floor(cut * bytes.length));
        return { bytes, chunkSize };
      });
  });
}

// ---- well-behaved sessions -----------------------------------------------------------------

/**
 * Well-behaved turns of one session: a prompt, model entries with calls and their results;
 * the last turn may stop anywhere. Made from the record to continue (its uuid, or null).
 * `run` tags a made batch's uuids and call ids (evaluated when it is made); `noNul` keeps
 * NUL out of prompts (PostgreSQL text cannot hold one).
 */
export function sessionTurnsArb(
  prefix: string,
  opts: { sessionId: string; version?: string; run?: () => string; noNul?: boolean },
): fc.Arbitrary<(parent: string | null) => ChatRecord[]> {
  const { sessionId, version = 'mend/0.1.0' } = opts;
  return fc
    .record({
      turns: fc.array(fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 5 }),
      stop: fc.nat({ max: 20 }),
      text: fc.string({ maxLength: 5 }).map((t) => (opts.noNul ? t.replace(/\0/g, '') : t)),
      cwd: fc.constantFrom('/p', undefined),
    })
    .map(({ turns, stop, text, cwd }) => (start: string | null) => {
      const out: ChatRecord[] = [];
      let parent = start;
      const tag = `${prefix}${opts.run?.() ?? ''}`;
      const push = (r: Omit<ChatRecord, 'uuid' | 'parentUuid' | 'sessionId' | 'timestamp' | 'version'>): void => {
        const uuid = `${tag}${out.length}`;
        out.push({ uuid, parentUuid: parent, sessionId, timestamp: '2026-01-01T00:00:00.000Z', version, ...(cwd ? { cwd } : {}), ...r } as ChatRecord);
        parent = uuid;
      };
      turns.forEach((rounds, t) => {
        push({ type: 'user', message: { role: 'user', parts: [{ text: `${text}${t}` }] } });
        rounds.forEach((calls, r) => {
          const ids = Array.from({ length: calls }, (_, c) => `${tag}t${t}r${r}c${c}`);
          const parts: Part[] = [{ text: 'ok' }, ...ids.map((id) => ({ functionCall: { id, name: 'read_file', args: { p: id } } }))];
          push({ type: 'assistant', message: { role: 'model', parts } });
          for (const id of ids)
            push({ type: 'tool_result', message: { role: 'user', parts: [{ functionResponse: { id, name: 'read_file', response: { output: id } } }] } });
        });
        push({ type: 'assistant', message: { role: 'model', parts: [{ text: 'done' }] } });
      });
      return out.slice(0, Math.max(1, out.length - stop));
    });
}
