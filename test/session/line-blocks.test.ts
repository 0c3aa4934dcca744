import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesLineBlocks, decodeLine } from '../../src/session/line-blocks.js';

/** Bytes biased towards what tears UTF-8: newlines, lead bytes, continuation bytes, ASCII. */
const byte = fc.oneof(fc.constant(0x0a), fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xbf }), fc.integer({ min: 0xc0, max: 0xff }));
const utf8Text = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => Buffer.from(s, 'utf8'));
const bytes = fc.oneof(
  fc.array(byte, { maxLength: 300 }).map((xs) => Buffer.from(xs)),
  fc.array(fc.oneof(utf8Text, fc.constant(Buffer.from('\n'))), { maxLength: 30 }).map((xs) => Buffer.concat(xs)),
);

describe('line blocks', () => {
  // The readers decode line by line (line-blocks.ts, OnLineBlock); what they read must be
  // what decoding the whole file and cutting it at '\n' gives, invalid UTF-8 included.
  it('a line decoded alone is the same string as the whole text cut at its newlines (any bytes, any block size)', async () => {
    await fc.assert(
      fc.asyncProperty(bytes, fc.integer({ min: 1, max: 64 }), async (input, blockSize) => {
        const lines: string[] = [];
        const end = await bytesLineBlocks(
          input,
          (block) => {
            let start = 0;
            for (let nl = block.indexOf(0x0a); nl !== -1; nl = block.indexOf(0x0a, start)) {
              lines.push(decodeLine(block, start, nl));
              start = nl + 1;
            }
          },
          blockSize,
        );
        if (end.tail !== null) lines.push(decodeLine(end.tail, 0, end.tail.length));
        const whole = input.toString('utf8').split('\n');
        if (whole.at(-1) === '') whole.pop();
        expect(lines).toEqual(whole);
      }),
      { numRuns: 500 },
    );
  });
});
