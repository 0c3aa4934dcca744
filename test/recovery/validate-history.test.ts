import { describe, expect, it } from 'vitest';
import { validateProviderHistory } from '../../src/recovery/validate-history.js';
import { call, model, result, text, user } from '../support/history.js';

describe('validateProviderHistory', () => {
  it.each([
    ['dangling call at the end', [model(call('c1'))], /not answered/],
    ['result not directly after its call', [model(call('c1')), user(text('x')), user(result('c1'))], /not answered|once each|without its call/],
    ['results out of order', [model(call('a'), call('b')), user(result('b'), result('a'))], /once each in order/],
    ['duplicate result', [model(call('a')), user(result('a'), result('a'))], /once each/],
    ['orphan result', [user(text('x')), user(result('zz'))], /without its call/],
    ['call without id', [model(call(undefined)), user(text('x'))], /no id/],
    ['empty entry', [user()], /no parts/],
    ['text mixed into the result entry', [model(call('a')), user(result('a'), text('x'))], /other than tool results/],
    ['call id repeated inside one entry', [model(call('a'), call('a')), user(result('a'), result('a'))], /used twice/],
    ['a result named unlike its call', [model(call('a', 'read_file')), user(result('a', 'edit'))], /named edit, its call read_file/],
    ['an empty leftover part', [user(text('a'), { thoughtSignature: 'c2ln' })], /empty part/],
    ['a model entry of thoughts only', [user(text('a')), model({ text: 'hmm', thought: true })], /nothing but thoughts/],
  ])('rejects %s', (_name, history, problem) => {
    const v = validateProviderHistory(history);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.problems.join('\n')).toMatch(problem);
  });

  it('accepts a call id reused by a later response', () => {
    expect(validateProviderHistory([model(call('call_0')), user(result('call_0')), model(call('call_0')), user(result('call_0'))])).toEqual({ ok: true });
  });

  it('accepts a legal history, including a trailing user entry and consecutive user entries', () => {
    const h = [user(text('a')), user(text('b')), model(call('c1'), call('c2')), user(result('c1'), result('c2')), model(text('ok')), user(text('next'))];
    expect(validateProviderHistory(h)).toEqual({ ok: true });
  });
});
