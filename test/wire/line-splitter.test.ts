/**
 * One case suite for the one line splitter (src/wire/line-splitter.ts), run against every
 * way bytes reach it (a whole Buffer, pushed chunks cut anywhere, block reads from memory
 * and from a file, the block-level reads the outline pass uses) and against every consumer
 * that cuts lines with it: the session reader, export's raw lines, the stdio framer of
 * stream-json and ACP, and the foreign readers. Each consumer is compared with what an
 * independent oracle (split on '\n' by hand) says it must see.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanJsonLines } from '../../src/foreign/foreign-lines.js';
import { bytesLineBlocks, bytesLines, readFileLines } from '../../src/session/line-blocks.js';
import { readSessionBytes, readSessionLog } from '../../src/session/log-reader.js';
import { jsonlLines } from '../../src/store/jsonl/jsonl-lines.js';
import { LineFramer } from '../../src/wire/line-framer.js';
import { LineSplitter, type LineView } from '../../src/wire/line-splitter.js';

const scratch = mkdtempSync(join(tmpdir(), 'mend-line-splitter-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const b = (s: string): Buffer => Buffer.from(s, 'utf8');
const huge = `{"text":"${'h'.repeat(300_000)}"}`;

const CASES: Array<{ name: string; bytes: Buffer }> = [
  { name: 'empty input', bytes: Buffer.alloc(0) },
  { name: 'one newline', bytes: b('\n') },
  { name: 'LF lines', bytes: b('{"a":1}\n{"b":2}\n') },
  { name: 'no trailing newline', bytes: b('{"a":1}\n{"b":2}') },
  { name: 'a torn last line', bytes: b('{"a":1}\n{"b":') },
  { name: 'CRLF lines', bytes: b('{"a":1}\r\n{"b":2}\r\n{"c":3}') },
  { name: 'a lone CR inside a line', bytes: b('{"a":\r1}\n\r\n\r') },
  { name: 'empty and whitespace-only lines', bytes: b('\n\n  \n{"a":1}\n\t\r\n\u00a0\n\n') },
  { name: 'multi-byte UTF-8', bytes: b('{"t":"é€😀"}\n["ß","漢字","\u2028"]\n"😀😀"') },
  { name: 'a byte-order mark on line 1 (and on line 2, where it is data)', bytes: b('\ufeff{"a":1}\n\ufeff{"b":2}\n') },
  { name: 'a huge line between short ones', bytes: b(`{"a":1}\n${huge}\n{"b":2}\n${huge}`) },
  {
    name: 'NUL bytes and garbage',
    bytes: Buffer.concat([
      b('{"a":1}\n'),
      Buffer.from([0, 0, 0]),
      b('\n{"b'),
      Buffer.from([0xff, 0xc3]),
      b('"}\n'),
      Buffer.from([0xed, 0xa0, 0x80, 0x0a, 0x00, 0x7b, 0x7d]),
    ]),
  },
];

interface Line {
  number: number;
  offset: number;
  hex: string;
  terminated: boolean;
}

/** What any entry must hand over: the input split on '\n' by hand. */
function oracle(input: Buffer): Line[] {
  const out: Line[] = [];
  const pieces = input.toString('latin1').split('\n');
  let offset = 0;
  pieces.forEach((piece, i) => {
    const terminated = i < pieces.length - 1;
    if (!terminated && piece === '') return; // nothing after the last '\n'
    out.push({ number: i + 1, offset, hex: Buffer.from(piece, 'latin1').toString('hex'), terminated });
    offset += piece.length + 1;
  });
  return out;
}

/** A line's text as every reader takes it, computed without the splitter's helpers. */
function readerText(line: Line, dropNul = false): string {
  let bytes = Buffer.from(line.hex, 'hex');
  if (dropNul) bytes = Buffer.from(bytes.filter((x) => x !== 0));
  let text = bytes.toString('utf8').replace(/\r$/, '');
  if (line.number === 1) text = text.replace(/^\ufeff/, '');
  return text;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const seen = (view: LineView): Line => ({
  number: view.number,
  offset: view.offset,
  hex: view.bytes.toString('hex', view.start, view.end),
  terminated: view.terminated,
});

function pushed(chunks: readonly Buffer[], blockSize?: number): Line[] {
  const out: Line[] = [];
  const splitter = new LineSplitter((view) => void out.push(seen(view)), { blockSize });
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  splitter.end(); // idempotent
  return out;
}

/** Two-piece cuts at every byte for small inputs; around the block edges and line ends for a huge one. */
function cuts(input: Buffer): number[] {
  if (input.length <= 4096) return Array.from({ length: input.length + 1 }, (_, i) => i);
  const at = new Set<number>();
  for (const edge of [0, 1, 7, 8, 9, 1 << 10, (1 << 14) - 1, 1 << 14, 1 << 16, (1 << 16) + 1, 1 << 17]) at.add(edge);
  for (let nl = input.indexOf(0x0a); nl !== -1; nl = input.indexOf(0x0a, nl + 1)) for (const d of [-1, 0, 1]) at.add(nl + d);
  return [...at].filter((c) => c >= 0 && c <= input.length);
}

describe.each(CASES)('line splitter: $name', ({ bytes }) => {
  const expected = oracle(bytes);

  it('a whole Buffer, split in place', () => {
    const out: Line[] = [];
    const end = LineSplitter.each(bytes, (view) => void out.push(seen(view)));
    expect(out).toEqual(expected);
    expect(end.lines).toBe(expected.length);
    expect(end.bytes).toBe(bytes.length);
    expect(end.lastByte).toBe(bytes.length === 0 ? -1 : bytes[bytes.length - 1]);
  });

  it('pushed whole, cut in two anywhere, and byte by byte (small blocks too)', () => {
    expect(pushed([bytes])).toEqual(expected);
    for (const cut of cuts(bytes)) expect(pushed([bytes.subarray(0, cut), bytes.subarray(cut)], 8)).toEqual(expected);
    if (bytes.length <= 4096) expect(pushed(Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1)))).toEqual(expected);
  });

  it('read in blocks from memory and from a file', async () => {
    for (const blockSize of [1, 3, 64, 1 << 16]) {
      const out: Line[] = [];
      const end = await bytesLines(bytes, (view) => void out.push(seen(view)), blockSize);
      expect(out).toEqual(expected);
      expect(end.bytes).toBe(bytes.length);
    }
    const file = join(scratch, 'case.jsonl');
    writeFileSync(file, bytes);
    const out: Line[] = [];
    await readFileLines(file, (view) => void out.push(seen(view)), 5);
    expect(out).toEqual(expected);
  });

  it('runs of complete lines (the outline pass reads these) cover every terminated line, the tail apart', async () => {
    for (const blockSize of [1, 7, 1 << 16]) {
      const runs: Buffer[] = [];
      const offsets: number[] = [];
      const end = await bytesLineBlocks(bytes, (run, offset) => void (runs.push(Buffer.from(run)), offsets.push(offset)), blockSize);
      const joined = Buffer.concat(runs);
      expect(Buffer.concat([joined, end.tail ?? Buffer.alloc(0)]).equals(bytes)).toBe(true);
      expect(offsets).toEqual(runs.map((_, i) => runs.slice(0, i).reduce((n, r) => n + r.length, 0)));
      expect(runs.every((r) => r.at(-1) === 0x0a)).toBe(true);
      expect(end.tail === null).toBe(expected.at(-1)?.terminated !== false);
    }
  });

  it('export copies every line raw', async () => {
    const file = join(scratch, 'export.jsonl');
    writeFileSync(file, bytes);
    const out: string[] = [];
    for await (const line of jsonlLines(file, 7)) out.push(line);
    expect(out).toEqual(expected.map((l) => Buffer.from(l.hex, 'hex').toString('utf8')));
  });

  it('the stdio framer gives a value or a malformed line for every non-blank line', () => {
    const framer = new LineFramer();
    const framed = [...framer.push(bytes), ...framer.end()];
    const want = expected
      .map((l) => ({ l, text: readerText(l) }))
      .filter(({ text }) => text.trim() !== '')
      .map(({ l, text }) => (parses(text) ? { line: l.number, value: JSON.parse(text) as unknown } : { line: l.number, code: 'malformed_line' }));
    expect(framed.map((f) => (f.ok ? { line: f.line, value: f.value } : { line: f.line, code: f.code }))).toEqual(want);
  });

  /** The lines a reader reports as damaged: not blank and not JSON (torn when it is the unterminated last). */
  const damaged = (dropNul: boolean) =>
    expected
      .map((l) => ({ l, text: readerText(l, dropNul) }))
      .filter(({ text }) => text.trim() !== '' && !parses(text))
      .map(({ l }) => ({ line: l.number, code: l.terminated ? 'malformed_line' : 'torn_tail' }));

  it('the session reader counts every line and reports the damaged ones', async () => {
    const file = join(scratch, 'read.jsonl');
    writeFileSync(file, bytes);
    for (const result of [await readSessionBytes(bytes, { chunkSize: 3 }), await readSessionLog(file)]) {
      expect(result.lines).toBe(expected.length);
      expect(result.bytes).toBe(bytes.length);
      expect(result.endsWithNewline).toBe(bytes.at(-1) === 0x0a);
      const reported = result.diagnostics
        .filter((d) => d.code === 'malformed_line' || d.code === 'torn_tail')
        .map((d) => ({ line: 'line' in d ? d.line : 0, code: d.code }));
      expect(reported).toEqual(damaged(false));
    }
  });

  it('the foreign readers count every line and report the damaged ones (NUL bytes dropped first)', () => {
    const scanned = scanJsonLines(bytes);
    expect(scanned.lines).toBe(expected.length);
    expect(scanned.endsWithNewline).toBe(bytes.at(-1) === 0x0a);
    const reported = scanned.diagnostics
      .filter((d) => d.code === 'malformed_line' || d.code === 'torn_tail')
      .map((d) => ({ line: 'line' in d ? d.line : 0, code: d.code }));
    expect(reported).toEqual(damaged(true));
  });
});

describe('line splitter: a cap on the line length', () => {
  const input = b(`{"a":1}\n${'x'.repeat(100)}\n{"b":2}\n${'y'.repeat(40)}`);

  it('drops an over-long line as it streams in and reports it with its number, offset and length', () => {
    for (const chunks of [[input], Array.from({ length: input.length }, (_, i) => input.subarray(i, i + 1))]) {
      const out: Array<{ number: number; offset: number; tooLong: boolean; length: number; text: string }> = [];
      const splitter = new LineSplitter(
        (v) => void out.push({ number: v.number, offset: v.offset, tooLong: v.tooLong, length: v.length, text: v.bytes.toString('utf8', v.start, v.end) }),
        {
          maxLineBytes: 16,
          blockSize: 8,
        },
      );
      for (const chunk of chunks) splitter.push(chunk);
      splitter.end();
      expect(out).toEqual([
        { number: 1, offset: 0, tooLong: false, length: 7, text: '{"a":1}' },
        { number: 2, offset: 8, tooLong: true, length: 100, text: '' },
        { number: 3, offset: 109, tooLong: false, length: 7, text: '{"b":2}' },
        { number: 4, offset: 117, tooLong: true, length: 40, text: '' },
      ]);
    }
  });

  it('a handler that returns false stops the split', () => {
    const seenLines: number[] = [];
    const splitter = new LineSplitter((v) => {
      seenLines.push(v.number);
      return v.number < 2;
    });
    expect(splitter.push(b('a\nb\nc\nd\n'))).toBe(false);
    expect(splitter.end().stopped).toBe(true);
    expect(seenLines).toEqual([1, 2]);
  });
});
