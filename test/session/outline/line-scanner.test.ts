/**
 * The outline pass reads an ordinary record line from its bytes (line-scanner.ts) instead
 * of parsing it. Whatever a line holds, the outline must be exactly the one parsing every
 * line gives: the scanner may leave any line to JSON.parse, but a line it keeps must be
 * JSON that JSON.parse accepts, a record isCertainlyValidRecord accepts, with the same
 * uuid, parent, session, type, flags, parts' shape and ids. Each property builds logs,
 * reads them with and without the scanner (OutlinePass's `scans`) and compares the
 * passes; it also checks that the scanner did keep lines, so that it is what was tested.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineScanner } from '../../../src/session/outline/line-scanner.js';
import { OutlinePass } from '../../../src/session/outline/outline-pass.js';
import { isCertainlyValidRecord } from '../../../src/session/record-validation.js';
import { INVALID_UTF8_PIECES, sessionRecordsArb } from '../../support/arbitraries.js';

/** The first line of every log: the pass parses a file's first line (it may start with a byte-order mark). */
const FIRST = '{"uuid":"00000000-0000-4000-8000-000000000000","parentUuid":null,"sessionId":"s1","timestamp":"t","type":"system","subtype":"x"}';

interface Passes {
  scanning: OutlinePass;
  parsing: OutlinePass;
}

/** The log of `lines` read with the scanner and without it; the outlines must be equal. */
function bothPasses(lines: readonly Buffer[]): Passes {
  const bytes = Buffer.concat([Buffer.from(`${FIRST}\n`), ...lines.flatMap((l) => [l, Buffer.from('\n')])]);
  const scanning = new OutlinePass(bytes.length, bytes.length, true);
  scanning.block(bytes, 0);
  const parsing = new OutlinePass(bytes.length, bytes.length, true, 0, false);
  parsing.block(bytes, 0);
  const data = (pass: OutlinePass): unknown => {
    const { reparsed: _reparsed, scanned: _scanned, ...rest } = pass.data();
    return rest;
  };
  const [a, b] = [data(scanning), data(parsing)];
  // isDeepStrictEqual first (toEqual walks every element of the columns: most of this test's time).
  if (!isDeepStrictEqual(a, b)) expect(a).toEqual(b);
  expect(parsing.scanned).toBe(0);
  return { scanning, parsing };
}

/** Each line alone, once as the first of its shape (parsed) and once more (scanned when it can be). */
function eachTwice(lines: readonly Buffer[]): Buffer[] {
  return lines.flatMap((l) => [l, l]);
}

// ---- records: each field usually well-formed, sometimes any JSON value or absent ----------

const json = fc.jsonValue({ maxDepth: 3 });
/** Well-formed `weight` times in `weight + 1`. */
const maybeOf =
  (weight: number) =>
  <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
    fc.oneof({ weight, arbitrary: valid }, { weight: 1, arbitrary: json });
const maybe = maybeOf(12);
const opt = { requiredKeys: [] as never[] };
const str = fc.oneof(
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 10, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
);
const uuid = fc.oneof(fc.uuid(), fc.constantFrom('u1', 'u2', 'A0000000-0000-4000-8000-000000000000'), str);
const dict = fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 3 });
const partKey = fc.constantFrom('thoughtSignature', 'x', 'inlineData', '0', '__proto__', 'clé', '');

const partOf = (maybe: ReturnType<typeof maybeOf>) => {
  const call = maybe(fc.record({ id: maybe(str), name: maybe(fc.constantFrom('read_file', 'edit', 'x')), args: maybe(dict), extra: json }, opt));
  const result = maybe(fc.record({ id: maybe(str), name: maybe(fc.constantFrom('read_file', 'edit')), response: maybe(dict) }, opt));
  const extra = fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.tuple(partKey, json) });
  return fc
    .tuple(
      fc.oneof(
        fc.record({ text: maybe(str), thought: maybe(fc.boolean()) }, { requiredKeys: ['text'] }),
        fc.record({ functionCall: call, thought: maybe(fc.boolean()) }, { requiredKeys: ['functionCall'] }),
        fc.record({ functionResponse: result }),
        fc.record({ text: maybe(str), thought: maybe(fc.boolean()), functionCall: call, functionResponse: result }, opt),
      ),
      extra,
    )
    .map(([p, more]) => (more === undefined ? p : { ...p, [more[0]]: more[1] }));
};

const ROLE = { user: 'user', assistant: 'model', tool_result: 'user', system: 'model' } as const;

const recordOf = (maybe: ReturnType<typeof maybeOf>) =>
  fc
    .tuple(
      fc.constantFrom('user', 'assistant', 'tool_result', 'system'),
      fc.record(
        {
          uuid: maybe(uuid),
          parentUuid: maybe(fc.option(uuid, { nil: null })),
          sessionId: maybe(fc.constantFrom('s1', 's1', 's2')),
          timestamp: maybe(str),
          type: fc.constant(undefined as unknown),
          provenance: maybe(str),
          cwd: maybe(str),
          version: maybe(fc.constantFrom('mend/0.1.0', '0.24.4', 'mend', '')),
          gitBranch: maybe(str),
          subtype: maybe(fc.constantFrom('chat_compression', 'turn_aborted', 'ui_telemetry')),
          message: maybe(
            fc.record({ role: maybe(fc.constant(undefined as unknown)), parts: maybe(fc.array(partOf(maybe), { maxLength: 3 })), extra: json }, opt),
          ),
          systemPayload: maybe(fc.record({ displayText: maybe(str), uiEvent: json }, opt)),
          model: maybe(str),
          usageMetadata: maybe(dict),
          toolCallResult: maybe(
            fc.record({ callId: maybe(str), status: maybe(str), errorType: maybe(str), resultDisplay: json }, { requiredKeys: ['callId', 'status'] }),
          ),
          recovery: maybe(fc.record({ planId: maybe(str), synthetic: maybe(fc.constant(true)) })),
          isSidechain: maybe(fc.boolean()),
          agentId: maybe(str),
          extra: json,
        },
        { requiredKeys: ['uuid', 'parentUuid', 'sessionId', 'timestamp', 'message'] },
      ),
      fc.boolean(),
    )
    // The type and the message's role agree (or were replaced by any JSON value): more records are valid.
    .map(([type, record, typeFirst]) => {
      const r: Record<string, unknown> = { ...record };
      if (r['type'] === undefined) r['type'] = type;
      const message = r['message'];
      if (typeof message === 'object' && message !== null && !Array.isArray(message) && (message as { role?: unknown }).role === undefined) {
        r['message'] = { role: ROLE[type], ...message };
      }
      // Keys in another order now and then (the scanner guesses the next key from the last line's).
      return typeFirst ? { type: r['type'], ...r } : r;
    });

/** Records mostly valid (the scanner keeps many), and records with many odd fields (it leaves most). */
const recordArb = fc.oneof(recordOf(maybeOf(80)), recordOf(maybe));

/** JSON text of a value with whitespace (JSON's four kinds) wherever JSON allows it. */
function spaced(value: unknown, pick: () => number): string {
  const ws = (): string => ['', '', '', ' ', '\t', '\r', '\n', '  '][pick() % 8]!;
  const out = (v: unknown): string => {
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${out(x)}${ws()}`).join(`,${ws()}`)}]`;
    if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}${ws()}:${ws()}${out(x)}${ws()}`);
      return `{${ws()}${entries.join(`,${ws()}`)}}`;
    }
    return JSON.stringify(v);
  };
  return `${ws()}${out(value)}${ws()}`;
}

/** Damage that stays on one line: a byte changed, dropped or added, a key escaped or repeated. */
const damageArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('set' as const),
      at: fc.nat(),
      byte: fc.constantFrom(0x22, 0x5c, 0x00, 0x1f, 0x7f, 0x80, 0xff, 0x7b, 0x7d, 0x2c, 0x3a, 0x20, 0x75, 0x30),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('escape' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('repeat' as const), at: fc.nat() }) },
);

type Damage = typeof damageArb extends fc.Arbitrary<infer D> ? D : never;

function damaged(text: string, damage: Damage): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  switch (damage.kind) {
    case 'none':
      return bytes;
    case 'set': {
      const copy = Buffer.from(bytes);
      if (copy.length > 0) copy[damage.at % copy.length] = damage.byte;
      return copy.map((b) => (b === 0x0a ? 0x20 : b)) as Buffer;
    }
    case 'drop': {
      const at = damage.at % Math.max(1, bytes.length);
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
    }
    case 'escape': {
      // A key's first letter as \u00XX: the same key to JSON.parse, other bytes to the scanner.
      const keys = [...text.matchAll(/"([a-zA-Z])([A-Za-z]*)":/g)];
      if (keys.length === 0) return bytes;
      const m = keys[damage.at % keys.length]!;
      const escapedKey = `"\\u00${m[1]!.charCodeAt(0).toString(16)}${m[2]}":`;
      return Buffer.from(text.slice(0, m.index) + escapedKey + text.slice(m.index + m[0].length), 'utf8');
    }
    case 'repeat': {
      // A key written twice in its object: JSON.parse keeps the last value, at the first key's place.
      const keys = [...text.matchAll(/[{,]("[A-Za-z_]+":("[^"\\]*"|null|true|false|-?\d+|\{\}|\[\]),?)/g)];
      if (keys.length === 0) return bytes;
      const m = keys[damage.at % keys.length]!;
      const entry = m[1]!.endsWith(',') ? m[1]! : `${m[1]!},`;
      const at = m.index + 1;
      return Buffer.from(text.slice(0, at) + entry + text.slice(at), 'utf8');
    }
  }
}

describe('the outline pass reading lines with the scanner', () => {
  it('property: generated records, spaced and damaged, give the outline of parsing every line', () => {
    let scanned = 0;
    let lines = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(recordArb, damageArb, fc.boolean(), fc.array(fc.nat(), { minLength: 8, maxLength: 8 })), { minLength: 1, maxLength: 8 }),
        (items) => {
          const made = items.map(([record, damage, withSpace, picks]) => {
            let n = 0;
            const text = withSpace ? spaced(record, () => picks[n++ % picks.length]!) : JSON.stringify(record);
            return damaged(text.replace(/\n/g, ' '), damage);
          });
          const { scanning } = bothPasses(eachTwice(made));
          scanned += scanning.scanned;
          lines += made.length * 2;
        },
      ),
      { numRuns: 700 },
    );
    // Most generated lines are damaged or not valid records, and a shape's first line is always
    // parsed; the scanner still kept hundreds (measured: ~4% of the lines): tested, not bypassed.
    expect(scanned).toBeGreaterThan(lines / 40);
  });

  it('property: any bytes inside a text, a key or a skipped value, at any alignment', () => {
    const pieces = fc.oneof(
      fc.string({ maxLength: 12 }).map((s) => Buffer.from(s, 'utf8')),
      fc
        .constantFrom('\\"', '\\\\', '\\n', '\\u0041', '\\u00e9', '\\ud83d', '\\u12', '\\x', '\\', '"', '\t', '\u0001', 'é', '😀')
        .map((s) => Buffer.from(s, 'utf8')),
      fc.constantFrom(...INVALID_UTF8_PIECES).map((p) => Buffer.from(p.map((b) => (b === 0x0a ? 0x20 : b)))),
    );
    const raw = fc.array(pieces, { maxLength: 10 }).map((p) => Buffer.concat(p));
    let scanned = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(7), raw, fc.constantFrom('text', 'key', 'args', 'agent', 'display')), { minLength: 1, maxLength: 6 }), (items) => {
        const made = items.map(([pad, bytes, where]) => {
          const head = `{"uuid":"u${pad}","parentUuid":null,${' '.repeat(pad)}"sessionId":"s1","timestamp":"t","type":"assistant",`;
          const [before, after] =
            where === 'text'
              ? ['"message":{"role":"model","parts":[{"text":"', '"}]}}']
              : where === 'key'
                ? ['"message":{"role":"model","parts":[{"text":"a"}]},"', '":1}']
                : where === 'args'
                  ? ['"message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"edit","args":{"a":"', '"}}}]}}']
                  : where === 'agent'
                    ? ['"message":{"role":"model","parts":[]},"agentId":"', '"}']
                    : ['"message":{"role":"model","parts":[]},"toolCallResult":{"resultDisplay":"', '"}}'];
          return Buffer.concat([Buffer.from(head + before), bytes, Buffer.from(after)]);
        });
        scanned += bothPasses(eachTwice(made)).scanning.scanned;
      }),
      { numRuns: 600 },
    );
    expect(scanned).toBeGreaterThan(300);
  });

  it("property: generated sessions (the loader tests' logs) give the same outline", () => {
    let scanned = 0;
    fc.assert(
      fc.property(sessionRecordsArb, (records) => {
        scanned += bothPasses(eachTwice(records.map((r) => Buffer.from(JSON.stringify(r), 'utf8')))).scanning.scanned;
      }),
      { numRuns: 300 },
    );
    expect(scanned).toBeGreaterThan(300);
  });

  it('keeps ordinary Qwen-format lines without parsing them, and leaves the unusual ones to JSON.parse', () => {
    const base = {
      uuid: '9f0c1d52-5b0e-4a7e-9d61-0c9a3b8e2f10',
      parentUuid: null,
      sessionId: 's1',
      timestamp: 't',
      cwd: '/p',
      version: '0.24.4',
      gitBranch: 'main',
    };
    const call = {
      ...base,
      type: 'assistant',
      model: 'm',
      message: { role: 'model', parts: [{ text: 'Reading.' }, { functionCall: { id: 'call_1', name: 'read_file', args: { path: 'a' } } }] },
    };
    const result = {
      ...base,
      type: 'tool_result',
      message: { role: 'user', parts: [{ functionResponse: { id: 'call_1', name: 'read_file', response: { output: 'x\ny "q"' } } }] },
      toolCallResult: { callId: 'call_1', status: 'success', resultDisplay: 'x' },
    };
    const line = (r: unknown): Buffer => Buffer.from(JSON.stringify(r), 'utf8');
    // Each line twice: the second of a shape is the one the scanner may keep.
    const { scanning } = bothPasses(eachTwice([line(call), line(result)]));
    expect(scanning.scanned).toBe(2);
    const unusual = [
      Buffer.from(JSON.stringify(call).replace('"uuid"', '"\\u0075uid"')), // an escaped key
      Buffer.from(JSON.stringify(call).replace('"call_1"', '""')), // an empty call id (the repair drops such a call)
      Buffer.from(JSON.stringify(call).replace('{"text":"Reading."}', '{"text":"Reading.","7":1}')), // an integer-like part key
      Buffer.from(JSON.stringify(call).replace('"uuid":', '"uuid":"x","uuid":')), // a repeated key
      Buffer.from(JSON.stringify({ ...call, sessionId: 'sé' })), // a kept string that is not ASCII
    ];
    const scanner = new LineScanner();
    for (const l of unusual) {
      expect(scanner.scan(l, 0, l.length)).toBe(false);
      expect(isCertainlyValidRecord(JSON.parse(l.toString('utf8')))).toBe(true);
    }
    expect(bothPasses(eachTwice(unusual)).scanning.scanned).toBe(0);
  });
});
