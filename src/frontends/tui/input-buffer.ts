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

/** Ctrl-W: deletes the word before the cursor (and the spaces after it), as a shell does. */
export function deleteWordBefore(b: InputBuffer): InputBuffer {
  let start = b.cursor;
  while (start > 0 && /\s/.test(b.text[start - 1]!)) start--;
  while (start > 0 && !/\s/.test(b.text[start - 1]!)) start--;
  if (start === b.cursor) return b;
  return edit(b, b.text.slice(0, start) + b.text.slice(b.cursor), start);
}

// eslint-disable-next-line no-control-regex
const CHUNK_TOKENS = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b[^[]?|[\u0000-\u0008\u000b-\u001f\u007f]|[^\u0000-\u0008\u000b-\u001f\u007f\u001b]+/g;

/** Editing keys a chunk may carry, by the byte (or sequence) a terminal sends for them. */
const CHUNK_KEYS: Readonly<Record<string, (b: InputBuffer) => InputBuffer>> = {
  '\u0001': lineStart, // Ctrl-A
  '\u0005': lineEnd, // Ctrl-E
  '\u0017': deleteWordBefore, // Ctrl-W
  '\u0015': clear, // Ctrl-U
  '\u0008': backspace, // Ctrl-H
  '\u007f': backspace, // Backspace
  '\u0002': moveLeft, // Ctrl-B
  '\u0006': moveRight, // Ctrl-F
  '\u001b[D': moveLeft,
  '\u001b[C': moveRight,
  '\u001b[H': lineStart,
  '\u001b[F': lineEnd,
};

/**
 * Keys that arrive in one chunk (fast typing, a paste, ssh or tmux): the terminal reader
 * hands them over as one string, so its control bytes are applied here as the keys they
 * are, never inserted as text. Any other control byte or escape sequence is dropped.
 */
export function applyChunk(b: InputBuffer, chunk: string): InputBuffer {
  let next = b;
  for (const token of chunk.match(CHUNK_TOKENS) ?? []) {
    const key = CHUNK_KEYS[token];
    if (key) next = key(next);
    else if (!/^[\u0000-\u0008\u000b-\u001f\u007f]/.test(token)) next = insert(next, token);
  }
  return next;
}

/** Whether a chunk holds control bytes or escape sequences besides line breaks and tabs. */
export function hasControlKeys(chunk: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(chunk);
}
