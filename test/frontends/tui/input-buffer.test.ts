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

describe('keys that arrive in one chunk', () => {
  it('Ctrl-A, Ctrl-E, Ctrl-W and Ctrl-U in a chunk edit the line, never become text', () => {
    expect(b.applyChunk(b.emptyBuffer, 'world\u0001hello \u0005!').text).toBe('hello world!');
    expect(b.applyChunk(b.emptyBuffer, 'deploy prod \u0017staging').text).toBe('deploy staging');
    expect(b.applyChunk(b.emptyBuffer, 'junk\u0015clean').text).toBe('clean');
    expect(b.applyChunk(b.emptyBuffer, 'ab\u007fc\u001b[Dx').text).toBe('axc');
  });

  it('other control bytes and escape sequences are dropped', () => {
    const x = b.applyChunk(b.emptyBuffer, 'a\u0007b\u001b[31mc\u001b[2Jd');
    expect(x.text).toBe('abcd');
    expect(b.hasControlKeys(x.text)).toBe(false);
  });

  it('Ctrl-W deletes the word before the cursor and the spaces after it', () => {
    const x = b.deleteWordBefore(b.moveLeft(b.moveLeft(b.moveLeft(typed('one two  three')))));
    expect([x.text, x.cursor]).toEqual(['one two  ree', 9]);
    expect(b.deleteWordBefore(typed('one two  ')).text).toBe('one ');
    expect(b.deleteWordBefore(b.emptyBuffer)).toBe(b.emptyBuffer);
  });
});
