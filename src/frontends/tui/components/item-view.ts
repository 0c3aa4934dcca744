/** One UI item. Finished items are drawn once (static region); live ones are redrawn as they grow. */
import { Box, Text } from 'ink';
import { createElement as h, type ReactElement } from 'react';
import type { Theme } from '../theme.js';
import { sanitizedItem, type ToolStatus, type UiItem } from '../ui-items.js';
import { wrapWords } from './wrap-words.js';

export const OUTPUT_LINES = 6;
const ARGS_CHARS = 160;

export interface ItemProps {
  item: UiItem;
  theme: Theme;
  width: number;
  showThoughts: boolean;
  /** Live items only: at most this many rows, the newest ones. A live region taller than the screen makes Ink redraw it all (flicker). */
  maxRows?: number;
}

export function ItemView({ item: shown, theme, width, showThoughts, maxRows }: ItemProps): ReactElement {
  let item = sanitizedItem(shown);
  if (maxRows !== undefined && item.type === 'assistant') item = { ...item, text: tailRows(item.text, width - 2, maxRows) };
  switch (item.type) {
    case 'user':
      return h(
        Box,
        { width, marginTop: 1 },
        h(Text, { color: theme.user, bold: theme.styled }, '> '),
        h(Box, { flexShrink: 1 }, h(Text, { color: theme.user }, item.text)),
      );
    case 'assistant':
      return h(Box, { width }, h(Text, { color: theme.accent }, '✦ '), h(Box, { flexShrink: 1 }, h(Text, null, item.text)));
    case 'thought': {
      const lines = item.text.trim().split('\n');
      const shown = showThoughts
        ? item.text.trim()
        : `${lines[0]?.slice(0, Math.max(10, width - 30)) ?? ''}${lines.length > 1 || (lines[0]?.length ?? 0) > width - 30 ? ' …' : ''}`;
      return h(Box, { width }, h(Text, { dimColor: theme.styled, italic: theme.styled }, `✻ ${shown}${showThoughts ? '' : '  (ctrl-o: thoughts)'}`));
    }
    case 'tool':
      return ToolView({ item, theme, width });
    case 'info':
      return h(
        Box,
        { width, flexDirection: 'column', borderStyle: 'round', borderColor: theme.info, paddingX: 1, marginY: 1 },
        ...rows(`INFO  ${item.title}`, width).map((row, i) => h(Text, { key: `t${i}`, color: theme.info, bold: theme.styled }, row)),
        ...item.lines.flatMap((line, i) => rows(line, width).map((row, j) => h(Text, { key: `l${i}.${j}` }, row))),
        ...item.actions.flatMap((action, i) =>
          rows(`→ ${action}`, width).map((row, j) => h(Text, { key: `a${i}.${j}`, color: theme.accent }, j === 0 ? row : `  ${row}`)),
        ),
      );
    case 'panel':
      return h(
        Box,
        { width, flexDirection: 'column', borderStyle: 'round', borderColor: item.tone === 'warning' ? theme.warning : theme.muted, paddingX: 1 },
        ...rows(`${item.label}  ${item.title}`, width).map((row, i) =>
          h(Text, { key: `t${i}`, color: item.tone === 'warning' ? theme.warning : undefined, bold: theme.styled }, row),
        ),
        ...item.lines.flatMap((line, i) => rows(line, width).map((row, j) => h(Text, { key: `l${i}.${j}` }, row))),
      );
    case 'error':
      return h(Box, { width }, h(Text, { color: theme.error, wrap: 'wrap' }, `✖ error [${item.code}]: ${item.message}`));
    case 'status':
      return h(Box, { width }, h(Text, { dimColor: theme.styled, wrap: 'wrap' }, `· ${item.text}`));
  }
}

/** Rows of a framed block: its width less the border and padding (and 2 more for an action's indent). */
function rows(text: string, width: number): string[] {
  return wrapWords(text, width - 6);
}

const STATUS_TEXT: Record<ToolStatus, string> = {
  running: 'running',
  done: 'done',
  failed: 'failed',
  denied: 'denied',
  cancelled: 'cancelled',
  unknown: 'outcome unknown',
};

function ToolView({ item, theme, width }: { item: Extract<UiItem, { type: 'tool' }>; theme: Theme; width: number }): ReactElement {
  const color = item.status === 'done' ? theme.success : item.status === 'running' ? theme.warning : item.status === 'unknown' ? theme.warning : theme.error;
  const mark = item.status === 'done' ? '✔' : item.status === 'running' ? '⋯' : item.status === 'unknown' ? '?' : '✖';
  const args = argsText(item.args);
  const { lines, hidden } = trimOutput(item.output, OUTPUT_LINES);
  return h(
    Box,
    { width, flexDirection: 'column' },
    h(
      Text,
      { wrap: 'wrap' },
      h(Text, { color, bold: theme.styled }, `${mark} ${item.name}`),
      h(Text, { dimColor: theme.styled }, args ? ` ${args}` : ''),
      h(Text, { color }, `  [${STATUS_TEXT[item.status]}]`),
    ),
    ...lines.map((line, i) => h(Text, { key: `o${i}`, dimColor: theme.styled, wrap: 'truncate-end' }, `  │ ${line}`)),
    hidden > 0 ? h(Text, { key: 'more', dimColor: theme.styled }, `  │ … ${hidden} more line${hidden === 1 ? '' : 's'}`) : null,
  );
}

/** The first lines of a tool's output and how many were left out. */
export function trimOutput(output: string, max: number): { lines: string[]; hidden: number } {
  const all = output
    .replace(/\s+$/, '')
    .split('\n')
    .filter((l, i, a) => a.length > 1 || l !== '');
  return { lines: all.slice(0, max), hidden: Math.max(0, all.length - max) };
}

function argsText(args: Record<string, unknown>): string {
  const text = Object.keys(args).length === 0 ? '' : JSON.stringify(args);
  return text.length > ARGS_CHARS ? `${text.slice(0, ARGS_CHARS - 1)}…` : text;
}

/** The last `rows` rows of a text wrapped at `width` columns (roughly: by characters), with a mark when some were left out. */
export function tailRows(text: string, width: number, rows: number): string {
  const wrapped: string[] = [];
  for (const line of text.split('\n')) {
    if (line.length <= width) wrapped.push(line);
    else for (let i = 0; i < line.length; i += width) wrapped.push(line.slice(i, i + width));
  }
  if (wrapped.length <= rows) return text;
  return `… (${wrapped.length - rows + 1} earlier rows shown when the answer is complete)\n${wrapped.slice(-(rows - 1)).join('\n')}`;
}
