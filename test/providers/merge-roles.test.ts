import { describe, expect, it } from 'vitest';
import { mergeConsecutiveRoles } from '../../src/providers/merge-roles.js';
import type { Content } from '../../src/session/records.js';

describe('mergeConsecutiveRoles', () => {
  it('merges runs of the same role and keeps alternation', () => {
    const history: Content[] = [
      { role: 'user', parts: [{ text: 'a' }] },
      { role: 'user', parts: [{ text: 'b' }] },
      { role: 'model', parts: [{ text: 'c' }] },
      { role: 'model', parts: [{ functionCall: { id: '1', name: 'x', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { id: '1', name: 'x', response: { output: 'ok' } } }] },
    ];
    const snapshot = structuredClone(history);
    expect(mergeConsecutiveRoles(history)).toEqual([
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }] },
      { role: 'model', parts: [{ text: 'c' }, { functionCall: { id: '1', name: 'x', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { id: '1', name: 'x', response: { output: 'ok' } } }] },
    ]);
    expect(history).toEqual(snapshot);
  });

  it('handles empty and single-entry histories', () => {
    expect(mergeConsecutiveRoles([])).toEqual([]);
    expect(mergeConsecutiveRoles([{ role: 'model', parts: [] }])).toEqual([{ role: 'model', parts: [] }]);
  });
});
