import { describe, expect, it } from 'vitest';
import { wrapWords } from '../../../src/frontends/tui/components/wrap-words.js';

describe('wrapWords', () => {
  it('breaks at spaces without a leading blank, keeps inner spacing, cuts long words', () => {
    expect(wrapWords('INFO  kind · cause crash', 12)).toEqual(['INFO  kind ·', 'cause crash']);
    expect(wrapWords('abcdefghijkl xy', 5)).toEqual(['abcde', 'fghij', 'kl xy']);
    expect(wrapWords('one\n  two', 10)).toEqual(['one', '  two']);
    expect(wrapWords('', 10)).toEqual(['']);
  });
});
