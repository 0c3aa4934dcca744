/**
 * The prompt line's editing model, pure so it is tested without a terminal:
 * text with a cursor, several lines, and a history walked with up/down (the
 * line being typed is kept as a draft while walking).
 */
export interface InputBuffer {
  readonly text: string;
  /** Index into `text`. */
  readonly cursor: number;
  /** Sent prompts, oldest first. */
  readonly history: readonly string[];
  /** Position while walking the history; null when editing the draft. */
  readonly historyIndex: number | null;
  readonly draft: string;
}

export const emptyBuffer: InputBuffer = { text: '', cursor: 0, history: [], historyIndex: null, draft: '' };

const edit = (b: InputBuffer, text: string, cursor: number): InputBuffer => ({ ...b, text, cursor, historyIndex: null, draft: text });

/** Inserts typed or pasted text; a paste's line breaks (CR, CRLF) become newlines. */
export function insert(b: InputBuffer, typed: string): InputBuffer {
  const clean = typed.replace(/\r\n?/g, '\n').replace(/\t/g, '  ');
  return edit(b, b.text.slice(0, b.cursor) + clean + b.text.slice(b.cursor), b.cursor + clean.length);
}

export function backspace(b: InputBuffer): InputBuffer {
  if (b.cursor === 0) return b;
  return edit(b, b.text.slice(0, b.cursor - 1) + b.text.slice(b.cursor), b.cursor - 1);
}

export function moveLeft(b: InputBuffer): InputBuffer {
  return { ...b, cursor: Math.max(0, b.cursor - 1) };
}

export function moveRight(b: InputBuffer): InputBuffer {
  return { ...b, cursor: Math.min(b.text.length, b.cursor + 1) };
}

export function lineStart(b: InputBuffer): InputBuffer {
  return { ...b, cursor: b.text.lastIndexOf('\n', b.cursor - 1) + 1 };
}

export function lineEnd(b: InputBuffer): InputBuffer {
  const next = b.text.indexOf('\n', b.cursor);
  return { ...b, cursor: next === -1 ? b.text.length : next };
}

export function clear(b: InputBuffer): InputBuffer {
  return edit(b, '', 0);
}

/** Up: the line above in a multi-line text, else the previous history entry. */
export function up(b: InputBuffer): InputBuffer {
  const start = b.text.lastIndexOf('\n', b.cursor - 1);
  if (start !== -1) {
    const column = b.cursor - start - 1;
    const prevStart = b.text.lastIndexOf('\n', start - 1) + 1;
    return { ...b, cursor: Math.min(prevStart + column, start) };
  }
  if (b.history.length === 0) return b;
  const index = b.historyIndex === null ? b.history.length - 1 : Math.max(0, b.historyIndex - 1);
  const text = b.history[index] ?? '';
  return { ...b, text, cursor: text.length, historyIndex: index, draft: b.historyIndex === null ? b.text : b.draft };
}

/** Down: the line below, else the next history entry, and past the newest one the draft. */
export function down(b: InputBuffer): InputBuffer {
  const next = b.text.indexOf('\n', b.cursor);
  if (next !== -1) {
    const start = b.text.lastIndexOf('\n', b.cursor - 1) + 1;
    const column = b.cursor - start;
    const after = b.text.indexOf('\n', next + 1);
    return { ...b, cursor: Math.min(next + 1 + column, after === -1 ? b.text.length : after) };
  }
  if (b.historyIndex === null) return b;
  if (b.historyIndex >= b.history.length - 1) return { ...b, text: b.draft, cursor: b.draft.length, historyIndex: null };
  const index = b.historyIndex + 1;
  const text = b.history[index] ?? '';
  return { ...b, text, cursor: text.length, historyIndex: index };
}

/** Enter: the text to send (null when empty) and a fresh buffer that remembers it. */
export function submit(b: InputBuffer): { text: string | null; buffer: InputBuffer } {
  const text = b.text;
  if (text.trim() === '') return { text: null, buffer: { ...b, text: '', cursor: 0, historyIndex: null, draft: '' } };
  const history = b.history.at(-1) === text ? b.history : [...b.history, text];
  return { text, buffer: { text: '', cursor: 0, history, historyIndex: null, draft: '' } };
}

/** "\" right before the cursor at Enter asks for a new line instead of sending. */
export function wantsNewline(b: InputBuffer): boolean {
  return b.cursor > 0 && b.text[b.cursor - 1] === '\\';
}

export function newlineForBackslash(b: InputBuffer): InputBuffer {
  return edit(b, `${b.text.slice(0, b.cursor - 1)}\n${b.text.slice(b.cursor)}`, b.cursor);
}
