/**
 * The prompt line: the input buffer with its cursor shown as an inverse cell (a bar between
 * characters when the theme styles nothing); several lines when the text has them.
 */
import { Box, Text } from 'ink';
import { createElement as h, type ReactElement } from 'react';
import type { InputBuffer } from '../input-buffer.js';
import type { Theme } from '../theme.js';

/** Where the cursor is when no cell can be drawn inverse. */
const CURSOR_BAR = '▏';

export function PromptLine({ buffer, theme, width, hint }: { buffer: InputBuffer; theme: Theme; width: number; hint: string | null }): ReactElement {
  const before = buffer.text.slice(0, buffer.cursor);
  const at = buffer.text[buffer.cursor];
  const after = buffer.text.slice(buffer.cursor + 1);
  // A newline under the cursor is drawn as a space cell, then the break.
  const cursorCell = at === undefined || at === '\n' ? ' ' : at;
  const text = theme.styled
    ? [before, h(Text, { key: 'cursor', inverse: true }, cursorCell), at === '\n' ? `\n${after}` : after]
    : [before, CURSOR_BAR, buffer.text.slice(buffer.cursor)];
  return h(
    Box,
    { width, flexDirection: 'column', borderStyle: 'round', borderColor: theme.muted, paddingX: 1 },
    h(Box, null, h(Text, { color: theme.user, bold: theme.styled }, '> '), h(Box, { flexShrink: 1 }, h(Text, { wrap: 'wrap' }, ...text))),
    hint ? h(Text, { dimColor: theme.styled }, hint) : null,
  );
}
