/** Part templates (src/session/outline/record-outline.ts): one per shape, found by the shape alone. */
import { describe, expect, it } from 'vitest';
import { PartsOutliner, partsOf } from '../../../src/session/outline/record-outline.js';
import type { Part } from '../../../src/session/records.js';

const call = (id: string | undefined, name: unknown): Part => ({ functionCall: { ...(id === undefined ? {} : { id }), name, args: { x: 1 } } }) as Part;

function outline(outliner: PartsOutliner, parts: Part[]): { index: number; parts: readonly Part[] } {
  const ids: (string | undefined)[] = [];
  const template = outliner.template(parts, (id) => ids.push(id));
  return { index: template.index, parts: partsOf(template, (j) => ids[j], 0) };
}

describe('PartsOutliner', () => {
  it('shares a template between records of one shape and gives each its own ids back', () => {
    const o = new PartsOutliner();
    const a = outline(o, [{ text: 'reading' }, call('c1', 'read_file')]);
    const b = outline(o, [{ text: 'again' }, call('c2', 'read_file')]);
    expect(a.index).toBe(b.index);
    expect(a.parts).toEqual([{ text: 't' }, { functionCall: { id: 'c1', name: 'read_file' } }]);
    expect(b.parts).toEqual([{ text: 't' }, { functionCall: { id: 'c2', name: 'read_file' } }]);
    expect(outline(o, [{ text: '' }, call('c3', 'read_file')]).index).not.toBe(a.index);
    expect(outline(o, [{ text: 'x' }, call(undefined, 'read_file')]).index).not.toBe(a.index);
  });

  it('tells apart shapes a signature string could confuse: a key holding a separator, a name 5 and "5"', () => {
    const o = new PartsOutliner();
    const twoKeys = outline(o, [{ a: 1, text: 'x' } as Part]);
    const oneKey = outline(o, [{ 'a\u0001t': 1 } as Part]);
    expect(oneKey.index).not.toBe(twoKeys.index);
    expect(Object.keys(oneKey.parts[0]!)).toEqual(['a\u0001t']);
    const number = outline(o, [call('c', 5)]);
    const string = outline(o, [call('c', '5')]);
    expect(number.index).not.toBe(string.index);
    expect(string.parts).toEqual([{ functionCall: { id: 'c', name: '5' } }]);
  });

  it('stops remembering new shapes past its bound, and still outlines them correctly', () => {
    const o = new PartsOutliner();
    const early = outline(o, [call('c', 'early')]).index;
    // Two new lookup nodes a tool name (the name, the end of the part): past the bound of 65,536.
    for (let i = 0; i < 40_000; i++) outline(o, [call(`c${i}`, `tool_${i}`)]);
    expect(outline(o, [call('d', 'early')]).index).toBe(early);
    const late = [outline(o, [call('x', 'late')]), outline(o, [call('y', 'late')])];
    expect(late[0]!.index).not.toBe(late[1]!.index);
    expect(late.map((l) => l.parts)).toEqual([[{ functionCall: { id: 'x', name: 'late' } }], [{ functionCall: { id: 'y', name: 'late' } }]]);
  });
});
