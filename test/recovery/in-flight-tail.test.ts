/** Where a conversation's unfinished turn starts: what a fork of a running session leaves out. */
import { describe, expect, it } from 'vitest';
import { inFlightTailStart } from '../../src/recovery/in-flight-tail.js';
import { call, conversationOf, model, result, text, user } from '../support/history.js';

describe('inFlightTailStart', () => {
  it('a complete tail has no unfinished turn', () => {
    expect(inFlightTailStart(conversationOf([user(text('hi')), model(text('hello'))]))).toBeNull();
    expect(inFlightTailStart(conversationOf([]))).toBeNull();
  });

  it('a prompt waiting for the model starts at that prompt; prompts queued together go with it', () => {
    expect(inFlightTailStart(conversationOf([user(text('a')), model(text('b')), user(text('deploy'))]))).toBe(2);
    expect(inFlightTailStart(conversationOf([user(text('a')), model(text('b')), user(text('deploy')), user(text('and test'))]))).toBe(2);
    expect(inFlightTailStart(conversationOf([user(text('deploy'))]))).toBe(0);
  });

  it('a turn in its tool loop starts at the prompt before its first call, not at a result', () => {
    const history = [user(text('a')), model(text('b')), user(text('deploy')), model(call('c1')), user(result('c1')), model(call('c2'))];
    expect(inFlightTailStart(conversationOf(history))).toBe(2);
    // A result answered, the model not yet: still the same turn.
    expect(inFlightTailStart(conversationOf(history.slice(0, 5)))).toBe(2);
  });

  it('a chain whose unfinished turn has no prompt after the compression point has nothing to leave out', () => {
    expect(inFlightTailStart(conversationOf([model(call('c1'))]))).toBeNull();
  });
});
