import { describe, expect, it } from 'vitest';
import * as b from '../../../src/frontends/tui/input-buffer.js';

const typed = (text: string) => b.insert(b.emptyBuffer, text);

describe('prompt line editing', () => {
  it('inserts at the cursor and deletes before it', () => {
    let x = typed('helo');
    x = b.moveLeft(x);
    x = b.insert(x, 'l');
    expect(x.text).toBe('hello');
    x = b.backspace(b.lineEnd(x));
    expect([x.text, x.cursor]).toEqual(['hell', 4]);
  });

  it('a paste keeps its lines (CR and CRLF become newlines)', () => {
    expect(typed('a\r\nb\rc').text).toBe('a\nb\nc');
  });

  it('backslash before Enter asks for a new line', () => {
    const x = typed('first\\');
    expect(b.wantsNewline(x)).toBe(true);
    const y = b.insert(b.newlineForBackslash(x), 'second');
    expect(y.text).toBe('first\nsecond');
  });

  it('up/down walk the history and come back to the draft', () => {
    let x = b.submit(typed('one')).buffer;
    x = b.submit(b.insert(x, 'two')).buffer;
    x = b.insert(x, 'draft');
    x = b.up(x);
    expect(x.text).toBe('two');
    x = b.up(x);
    expect(x.text).toBe('one');
    x = b.up(x);
    expect(x.text).toBe('one');
    x = b.down(x);
    expect(x.text).toBe('two');
    x = b.down(x);
    expect(x.text).toBe('draft');
  });

  it('up/down move between the lines of a multi-line text before touching the history', () => {
    let x = b.submit(typed('old')).buffer;
    x = b.insert(x, 'abc\nde');
    x = b.up(x);
    expect([x.text, x.cursor]).toEqual(['abc\nde', 2]);
    x = b.down(x);
    expect(x.cursor).toBe(6);
  });

  it('an empty line is not sent and not remembered', () => {
    const { text, buffer } = b.submit(typed('   '));
    expect(text).toBeNull();
    expect(buffer.history).toEqual([]);
  });
});
