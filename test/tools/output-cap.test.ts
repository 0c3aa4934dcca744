import { describe, expect, it } from 'vitest';
import { OutputCapper, capText } from '../../src/tools/output-cap.js';

describe('OutputCapper', () => {
  it('passes small output through untouched', () => {
    const capper = new OutputCapper(100);
    capper.push('hello ');
    capper.push(Buffer.from('world'));
    expect(capper.text()).toBe('hello world');
  });

  it('keeps head and tail across many chunks and counts what it dropped', () => {
    const capper = new OutputCapper(10);
    for (let i = 0; i < 100; i += 1) capper.push(String(i % 10));
    expect(capper.totalBytes).toBe(100);
    expect(capper.text()).toBe('01234\n[output truncated: 90 bytes omitted]\n56789');
  });

  it('cuts on UTF-8 character boundaries', () => {
    const text = 'é'.repeat(20); // 2 bytes each
    const out = new OutputCapper(9);
    out.push(text);
    expect(out.text()).not.toContain('\uFFFD');
    expect(capText(text, 5)).toBe('éé\n[output truncated: 36 bytes omitted]\n');
  });
});
