/**
 * jsonlLines (export's raw lines) on 64 KiB blocks in one reused buffer: the same lines
 * as splitting the bytes on '\n' and decoding each, whatever the block size cuts
 * (lines, multi-byte characters, invalid UTF-8), a final line without '\n' included.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonlLines } from '../../src/store/jsonl/jsonl-lines.js';
import { isMendError } from '../../src/errors.js';
import { garbageLineArb, joinLines, splitLines } from '../support/arbitraries.js';

const scratch = mkdtempSync(join(tmpdir(), 'mend-jsonl-lines-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function collect(path: string, blockSize?: number): Promise<string[]> {
  const out: string[] = [];
  for await (const line of jsonlLines(path, blockSize)) out.push(line);
  return out;
}

describe('jsonlLines', () => {
  it('property: equals splitting on newlines and decoding each line, at any block size', async () => {
    const lineArb = fc.oneof(
      garbageLineArb,
      fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => Buffer.from(s)),
      fc.constant(Buffer.from('{"a":"é€😀"}\r')),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(lineArb, { maxLength: 12 }), fc.boolean(), fc.constantFrom(1, 2, 3, 7, 64, 1 << 16), async (lines, finalNewline, blockSize) => {
        const bytes = joinLines(lines, finalNewline && lines.length > 0);
        const file = join(scratch, 'log.jsonl');
        writeFileSync(file, bytes);
        const expected = splitLines(bytes).lines.map((l) => l.toString('utf8'));
        expect(await collect(file, blockSize)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('a line longer than the buffer comes out whole', async () => {
    const file = join(scratch, 'long.jsonl');
    const long = 'x'.repeat(300_000);
    writeFileSync(file, `a\n${long}\nb`);
    expect(await collect(file)).toEqual(['a', long, 'b']);
  });

  it('a missing file is session_not_found', async () => {
    await expect(collect(join(scratch, 'missing.jsonl'))).rejects.toSatisfy((e) => isMendError(e, 'session_not_found'));
  });
});
