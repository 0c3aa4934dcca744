import { describe, expect, it } from 'vitest';
import { capTextParts, MAX_TEXT_PART_BYTES } from '../../src/engine/record-caps.js';

describe('capTextParts', () => {
  it('leaves ordinary parts alone (same objects)', () => {
    const parts = [{ text: 'hello' }, { functionCall: { id: 'c', name: 'x', args: {} } }];
    const out = capTextParts(parts);
    expect(out[0]).toBe(parts[0]);
    expect(out[1]).toBe(parts[1]);
  });

  it('cuts a text part over the cap and says how much was omitted', () => {
    const big = 'a'.repeat(MAX_TEXT_PART_BYTES + 5000);
    const [part] = capTextParts([{ text: big, thought: true }]);
    expect(part?.thought).toBe(true);
    expect(part?.text?.startsWith('a'.repeat(1000))).toBe(true);
    expect(part?.text).toContain('[mend: 5000 bytes of text omitted');
    expect(Buffer.byteLength(part?.text ?? '')).toBeLessThan(MAX_TEXT_PART_BYTES + 200);
  });

  it('never splits a multi-byte character', () => {
    const [part] = capTextParts([{ text: 'é'.repeat(20) }], 11);
    const kept = part!.text!.split('\n[mend:')[0]!;
    expect(kept).toBe('é'.repeat(5));
    expect(part!.text).toContain('[mend: 30 bytes of text omitted');
  });
});
