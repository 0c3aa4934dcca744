import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_LINE_BYTES, LineFramer, serializeLine, type FramedLine } from '../../src/wire/line-framer.js';
import { cutAt, streamArb } from '../support/arbitraries.js';

/** Feeds the chunks to a fresh framer, then end(). */
function frame(chunks: ReadonlyArray<Buffer | string>, maxLineBytes?: number): FramedLine[] {
  const framer = new LineFramer(maxLineBytes);
  const out: FramedLine[] = [];
  for (const chunk of chunks) out.push(...framer.push(chunk));
  out.push(...framer.end());
  return out;
}

/** The framed lines without the error messages (their wording is not the contract). */
function shape(lines: readonly FramedLine[]): Array<{ line: number; value?: unknown; code?: string }> {
  return lines.map((l) => (l.ok ? { line: l.line, value: l.value } : { line: l.line, code: l.code }));
}

function bytewise(buf: Buffer): Buffer[] {
  return Array.from({ length: buf.length }, (_, i) => buf.subarray(i, i + 1));
}

/** What the framer must return, computed line by line: an independent oracle. */
function oracle(input: Buffer, maxLineBytes = DEFAULT_MAX_LINE_BYTES): Array<{ line: number; value?: unknown; code?: string }> {
  const out: Array<{ line: number; value?: unknown; code?: string }> = [];
  const raw = input.length === 0 ? [] : input.toString('latin1').split('\n');
  if (raw.at(-1) === '') raw.pop(); // the empty remainder after a final '\n' is not a line
  raw.forEach((latin1, i) => {
    const bytes = Buffer.from(latin1, 'latin1');
    const line = i + 1;
    if (bytes.length > maxLineBytes) return void out.push({ line, code: 'line_too_long' });
    const text = bytes.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    try {
      out.push({ line, value: JSON.parse(text) as unknown });
    } catch {
      out.push({ line, code: 'malformed_line' });
    }
  });
  return out;
}

describe('LineFramer', () => {
  it('frames one JSON value per line with 1-based line numbers', () => {
    expect(frame(['{"a":1}\n[2]\n"x"\n'])).toEqual([
      { ok: true, line: 1, value: { a: 1 } },
      { ok: true, line: 2, value: [2] },
      { ok: true, line: 3, value: 'x' },
    ]);
  });

  it('accepts CRLF line endings', () => {
    expect(shape(frame(['{"a":1}\r\n{"b":2}\r\n']))).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, value: { b: 2 } },
    ]);
    // The CR and the LF in different chunks.
    expect(shape(frame(['{"a":1}\r', '\n{"b":2}\r', '\n']))).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, value: { b: 2 } },
    ]);
  });

  it('skips blank and whitespace-only lines but still counts them', () => {
    expect(shape(frame(['\n  \n{"a":1}\n\r\n\t\n{"b":2}\n \r\n']))).toEqual([
      { line: 3, value: { a: 1 } },
      { line: 6, value: { b: 2 } },
    ]);
  });

  it('returns nothing for empty input, and end() with nothing pending returns nothing', () => {
    expect(frame([])).toEqual([]);
    expect(frame(['', Buffer.alloc(0)])).toEqual([]);
    const framer = new LineFramer();
    expect(framer.push('{"a":1}\n')).toHaveLength(1);
    expect(framer.end()).toEqual([]);
  });

  it('splits anywhere, also inside multi-byte UTF-8 characters, with the same result', () => {
    const input = Buffer.from(`${JSON.stringify({ text: 'é€😀 \u2028 ok' })}\n${JSON.stringify(['ß', '漢字'])}\r\n`, 'utf8');
    const whole = frame([input]);
    expect(shape(whole)).toEqual([
      { line: 1, value: { text: 'é€😀 \u2028 ok' } },
      { line: 2, value: ['ß', '漢字'] },
    ]);
    expect(frame(bytewise(input))).toEqual(whole);
    for (let cut = 0; cut <= input.length; cut++) {
      for (const second of [cut, Math.min(input.length, cut + 1), Math.min(input.length, cut + 3)]) {
        expect(frame(cutAt(input, [cut, second]))).toEqual(whole);
      }
    }
  });

  it('reports a line over the size cap as line_too_long and parses the next line', () => {
    const long = `{"text":"${'x'.repeat(100)}"}`;
    const input = `${long}\n{"a":1}\n`;
    const expected = [
      { line: 1, code: 'line_too_long' },
      { line: 2, value: { a: 1 } },
    ];
    expect(shape(frame([input], 32))).toEqual(expected);
    // The cap is crossed in a later chunk, or one byte at a time.
    expect(shape(frame([long.slice(0, 20), long.slice(20, 60), long.slice(60), '\n{"a":1}\n'], 32))).toEqual(expected);
    expect(shape(frame(bytewise(Buffer.from(input)), 32))).toEqual(expected);
    const [first] = frame([input], 32);
    expect(first).toMatchObject({ ok: false, line: 1, code: 'line_too_long' });
    expect(first && !first.ok ? first.message : '').toContain('32');
  });

  it('a line of exactly the cap is still parsed; one byte more is too long', () => {
    const exact = JSON.stringify({ t: 'y'.repeat(20) });
    expect(shape(frame([`${exact}\n`], exact.length))).toEqual([{ line: 1, value: { t: 'y'.repeat(20) } }]);
    expect(shape(frame([`${exact}\n`], exact.length - 1))).toEqual([{ line: 1, code: 'line_too_long' }]);
  });

  it('several long lines in a row each get their own report', () => {
    const long = 'z'.repeat(50);
    expect(shape(frame([`${long}\n${long}\n{"ok":true}\n${long}`], 12))).toEqual([
      { line: 1, code: 'line_too_long' },
      { line: 2, code: 'line_too_long' },
      { line: 3, value: { ok: true } },
      { line: 4, code: 'line_too_long' },
    ]);
  });

  it('reports malformed JSON with its line number and keeps reading', () => {
    const out = frame(['{"a":1}\n{"b":\n\n{"c":3}\nnot json\n{"d":4}\n']);
    expect(shape(out)).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, code: 'malformed_line' },
      { line: 4, value: { c: 3 } },
      { line: 5, code: 'malformed_line' },
      { line: 6, value: { d: 4 } },
    ]);
    const bad = out[1];
    expect(bad && !bad.ok ? bad.message : '').toMatch(/^line 2 is not JSON/);
  });

  it('treats invalid UTF-8 as data: it never throws, and a broken line is reported, not dropped', () => {
    const input = Buffer.concat([
      Buffer.from('{"a":"'),
      Buffer.from([0xff, 0xc3]),
      Buffer.from('"}\n{'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('}\n{"b":2}\n'),
    ]);
    expect(shape(frame([input]))).toEqual([
      { line: 1, value: { a: '\ufffd\ufffd' } },
      { line: 2, code: 'malformed_line' },
      { line: 3, value: { b: 2 } },
    ]);
  });

  it('end() frames an unterminated last line: a value, a malformed line or a long line', () => {
    const framer = new LineFramer();
    expect(shape(framer.push('{"a":1}\n{"b":2}'))).toEqual([{ line: 1, value: { a: 1 } }]);
    expect(shape(framer.end())).toEqual([{ line: 2, value: { b: 2 } }]);
    expect(framer.end()).toEqual([]);

    expect(shape(frame(['{"a":1}\n{"b":']))).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, code: 'malformed_line' },
    ]);
    expect(shape(frame(['{"a":1}\n', 'w'.repeat(40)], 16))).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, code: 'line_too_long' },
    ]);
    expect(frame(['{"a":1}\n   '])).toHaveLength(1); // a whitespace-only tail is blank
  });

  it('serializeLine writes one line that frames back to the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = serializeLine(value);
        expect(text.indexOf('\n')).toBe(text.length - 1);
        expect(shape(frame([text]))).toEqual([{ line: 1, value: JSON.parse(JSON.stringify(value)) as unknown }]);
      }),
      { numRuns: 300 },
    );
  });

  it('property: any split into chunks frames like the whole input, and like the line-by-line oracle', () => {
    fc.assert(
      fc.property(streamArb, fc.array(fc.nat(), { maxLength: 10 }), fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined }), (input, offsets, cap) => {
        const whole = frame([input], cap);
        expect(
          frame(
            cutAt(
              input,
              offsets.map((o) => o % (input.length + 1)),
            ),
            cap,
          ),
        ).toEqual(whole);
        expect(shape(whole)).toEqual(oracle(input, cap));
      }),
      { numRuns: 1000 },
    );
  });

  it('property: byte-at-a-time feeding frames like the whole input', () => {
    fc.assert(
      fc.property(streamArb, fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined }), (input, cap) => {
        expect(frame(bytewise(input), cap)).toEqual(frame([input], cap));
      }),
      { numRuns: 200 },
    );
  });
});

describe('LineFramer and a byte-order mark', () => {
  it('strips a UTF-8 BOM at the start of the stream', () => {
    const framer = new LineFramer();
    expect(framer.push(Buffer.from('\uFEFF{"type":"user"}\n{"a":1}\n', 'utf8'))).toEqual([
      { ok: true, line: 1, value: { type: 'user' } },
      { ok: true, line: 2, value: { a: 1 } },
    ]);
  });
});
