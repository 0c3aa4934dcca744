/** The prompt line: the input buffer with its cursor shown as an inverse cell; several lines when the text has them. */
import { Box, Text } from 'ink';
import { createElement as h, type ReactElement } from 'react';
import type { InputBuffer } from '../input-buffer.js';
import type { Theme } from '../theme.js';

export function PromptLine({ buffer, theme, width, hint }: { buffer: InputBuffer; theme: Theme; width: number; hint: string | null }): ReactElement {
  const before = buffer.text.slice(0, buffer.cursor);
  const at = buffer.text[buffer.cursor];
  const after = buffer.text.slice(buffer.cursor + 1);
  // A newline under the cursor is drawn as a space cell, then the break.
  const cursorCell = at === undefined || at === '\n' ? ' ' : at;
  return h(
    Box,
    { width, flexDirection: 'column', borderStyle: 'round', borderColor: theme.muted, paddingX: 1 },
    h(
      Box,
      null,
      h(Text, { color: theme.user, bold: true }, '> '),
      h(Box, { flexShrink: 1 }, h(Text, { wrap: 'wrap' }, before, h(Text, { inverse: true }, cursorCell), at === '\n' ? `\n${after}` : after)),
    ),
    hint ? h(Text, { dimColor: true }, hint) : null,
  );
}
