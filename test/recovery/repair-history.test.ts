import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { repairHistory } from '../../src/recovery/repair-history.js';
import { SYNTHETIC_RESULT_REASON } from '../../src/recovery/synthetic-result.js';
import { validateProviderHistory } from '../../src/recovery/validate-history.js';
import type { Content } from '../../src/session/records.js';
import { historyArb, plainHistoryArb } from '../support/arbitraries.js';
import { call, model, result, text, user } from '../support/history.js';

describe('repairHistory', () => {
  it('leaves a legal history untouched', () => {
    const h = [user(text('hi')), model(call('c1')), user(result('c1')), model(text('done'))];
    const r = repairHistory(h);
    expect(r.history).toEqual(h);
    expect(r.repairs).toEqual([]);
  });

  it('merges adjacent results split over records into one entry, in call order, without a repair', () => {
    const h = [model(call('a'), call('b')), user(result('b')), user(result('a'))];
    const r = repairHistory(h);
    expect(r.history).toEqual([model(call('a'), call('b')), user(result('a'), result('b'))]);
    expect(r.repairs).toEqual([]);
  });

  it('hoists a result found past an intervening model entry instead of synthesizing one (Qwen leaves it orphaned)', () => {
    const h = [model(call('c1')), model(text('thinking')), user(result('c1', 'run_shell_command', 'real'))];
    const r = repairHistory(h);
    expect(r.history).toEqual([model(call('c1')), user(result('c1', 'run_shell_command', 'real')), model(text('thinking'))]);
    expect(r.repairs).toEqual([{ type: 'hoisted_tool_result', callId: 'c1', name: 'run_shell_command' }]);
    expect(r.synthesizedCallIds).toEqual([]);
  });

  it('drops duplicates (first kept) and orphans, listing each', () => {
    const h = [
      model(call('c1')),
      user(result('c1', 'run_shell_command', 'first')),
      user(result('c1', 'run_shell_command', 'second'), result('zz', 'read_file')),
      model(text('ok')),
    ];
    const r = repairHistory(h);
    expect(r.history).toEqual([model(call('c1')), user(result('c1', 'run_shell_command', 'first')), model(text('ok'))]);
    expect(r.repairs).toEqual([
      { type: 'dropped_duplicate_tool_result', callId: 'c1', name: 'run_shell_command' },
      { type: 'dropped_orphan_tool_result', callId: 'zz', name: 'read_file' },
    ]);
  });

  it('synthesizes a failed result with an unknown outcome for a dangling call', () => {
    const r = repairHistory([user(text('go')), model(call('c1'), call('c2', 'write_file')), user(result('c1'))]);
    expect(r.history[2]).toEqual(user(result('c1'), { functionResponse: { id: 'c2', name: 'write_file', response: { error: SYNTHETIC_RESULT_REASON } } }));
    expect(r.repairs).toEqual([{ type: 'synthesized_tool_result', callId: 'c2', name: 'write_file' }]);
    expect(SYNTHETIC_RESULT_REASON).toMatch(/unknown/);
    expect(SYNTHETIC_RESULT_REASON).toMatch(/check the current state/);
    expect(SYNTHETIC_RESULT_REASON).not.toMatch(/retry if needed/i);
  });

  it('drops calls without an id and entries left empty', () => {
    const r = repairHistory([user(text('go')), model(call(undefined, 'list_directory')), user(text('again'))]);
    expect(r.history).toEqual([user(text('go')), user(text('again'))]);
    expect(r.repairs).toEqual([{ type: 'dropped_call_without_id', name: 'list_directory' }]);
  });

  it('never replaces a recorded result with a synthetic one', () => {
    const h = [model(call('c1')), user(text('mid-turn note')), user(result('c1', 'run_shell_command', 'recorded'))];
    const r = repairHistory(h);
    expect(JSON.stringify(r.history)).toContain('recorded');
    expect(JSON.stringify(r.history)).not.toContain(SYNTHETIC_RESULT_REASON);
    expect(r.history).toEqual([model(call('c1')), user(result('c1', 'run_shell_command', 'recorded')), user(text('mid-turn note'))]);
  });

  it('keeps user text that shared an entry with results, after the results', () => {
    const r = repairHistory([model(call('c1')), user(text('note'), result('c1'))]);
    expect(r.history).toEqual([model(call('c1')), user(result('c1')), user(text('note'))]);
  });

  it('a result before its call is an orphan; the call is then closed synthetically', () => {
    const r = repairHistory([user(result('c1')), model(call('c1'))]);
    expect(r.repairs.map((x) => x.type)).toEqual(['dropped_orphan_tool_result', 'synthesized_tool_result']);
    expect(validateProviderHistory(r.history)).toEqual({ ok: true });
  });

  it('pairs results with the latest call of their id: providers may reuse call_0 in every response', () => {
    const h = [model(call('call_0')), user(result('call_0', 'run_shell_command', 'first')), model(call('call_0'), text('x'))];
    const r = repairHistory(h);
    expect(r.repairs).toEqual([{ type: 'synthesized_tool_result', callId: 'call_0', name: 'run_shell_command' }]);
    expect(r.history[1]).toEqual(user(result('call_0', 'run_shell_command', 'first')));
    expect(validateProviderHistory(r.history)).toEqual({ ok: true });
    // A dangling call followed by a new call with the same id: the result answers the new one.
    const superseded = repairHistory([model(call('c')), model(call('c')), user(result('c', 'run_shell_command', 'late'))]);
    expect(superseded.repairs).toEqual([{ type: 'synthesized_tool_result', callId: 'c', name: 'run_shell_command' }]);
    expect(superseded.history.at(-1)).toEqual(user(result('c', 'run_shell_command', 'late')));
  });

  it('drops a second call with the same id inside one response', () => {
    const r = repairHistory([model(call('c1'), call('c1', 'read_file')), user(result('c1'))]);
    expect(r.repairs).toEqual([{ type: 'dropped_duplicate_call', callId: 'c1', name: 'read_file' }]);
    expect(validateProviderHistory(r.history)).toEqual({ ok: true });
  });
});

describe('repairHistory with keepFrom (a plan over an outline counts what comes before its tail)', () => {
  it('property: the same repairs and synthesized ids, the entries before counted, the rest equal, for every keepFrom', () => {
    fc.assert(
      fc.property(
        fc.oneof(historyArb, plainHistoryArb).chain((h) => fc.tuple(fc.constant(h), fc.integer({ min: 0, max: h.length }))),
        ([history, keepFrom]) => {
          const full = repairHistory(history, { shareUnchanged: true });
          const part = repairHistory(history, { shareUnchanged: true, keepFrom });
          expect(part.repairs).toEqual(full.repairs);
          expect(part.synthesizedCallIds).toEqual(full.synthesizedCallIds);
          expect(part.skipped! + part.history.length).toBe(full.history.length);
          expect(part.history).toEqual(full.history.slice(part.skipped));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('counts a sparse history (holes skipped) the same way', () => {
    // eslint-disable-next-line no-sparse-arrays
    const h = [model(call('c1')), , user(result('c1')), model(text('ok'))] as Content[];
    for (let keepFrom = 0; keepFrom <= h.length; keepFrom++) {
      const r = repairHistory(h, { shareUnchanged: true, keepFrom });
      expect(r.skipped! + r.history.length).toBe(3);
    }
  });
});
