/** The inline questions that replace the prompt line while they wait: a tool approval, the degraded-history confirmation, the session picker. */
import { Box, Text } from 'ink';
import { createElement as h, type ReactElement } from 'react';
import type { ToolCallInfo } from '../../../engine/engine-events.js';
import { stripControlSequences } from '../../shared/output-sink.js';
import { ageText, type PickerRow } from '../session-picker-rows.js';
import type { Theme } from '../theme.js';

export function ApprovalBox({ call, theme, width }: { call: ToolCallInfo; theme: Theme; width: number }): ReactElement {
  const args = JSON.stringify(call.args);
  return h(
    Box,
    { width, flexDirection: 'column', borderStyle: 'round', borderColor: theme.warning, paddingX: 1 },
    h(Text, { color: theme.warning, bold: theme.styled, wrap: 'wrap' }, `Allow ${call.name}?`),
    h(Text, { wrap: 'wrap' }, args.length > 400 ? `${args.slice(0, 399)}…` : args),
    h(Text, { wrap: 'wrap' }, '[y] allow once   [a] allow always for this session   [n] deny'),
  );
}

export function DegradedConfirm({ theme, width }: { theme: Theme; width: number }): ReactElement {
  return h(
    Box,
    { width, flexDirection: 'column', borderStyle: 'round', borderColor: theme.warning, paddingX: 1 },
    h(Text, { color: theme.warning, bold: theme.styled, wrap: 'wrap' }, 'The history is degraded.'),
    h(Text, { wrap: 'wrap' }, 'Only the records after the damage reach the model. Send the prompt anyway (as --accept-degraded)?'),
    h(Text, null, '[y] send   [n] keep it unsent'),
  );
}

export function SessionPicker({ rows, selected, theme, width }: { rows: PickerRow[]; selected: number; theme: Theme; width: number }): ReactElement {
  // A window of rows around the selection keeps a long list inside the screen.
  const start = Math.max(0, Math.min(selected - 4, rows.length - 10));
  const visible = rows.slice(start, start + 10);
  // Another agent's sessions listed too: a column says whose each one is.
  const agents = rows.some((row) => row.agent !== 'mend');
  return h(
    Box,
    { width, flexDirection: 'column', borderStyle: 'round', borderColor: theme.info, paddingX: 1 },
    h(Text, { bold: theme.styled }, 'Resume a session of this project (↑/↓, Enter, Esc)'),
    ...visible.map((row, i) => {
      const index = start + i;
      const marks = [row.current ? 'open' : '', row.running ? 'running elsewhere' : ''].filter(Boolean).join(', ');
      const line = `${index === selected ? '›' : ' '} ${agents ? `${row.agent.padEnd(6)}  ` : ''}${row.sessionId.slice(0, 8)}  ${row.kind}  cause ${row.cause}  ${row.records} rec  ${ageText(row.ageMs)} ago${marks ? `  (${marks})` : ''}`;
      const prompt = stripControlSequences(row.firstPrompt ?? '').replace(/\s+/g, ' ');
      return h(
        Box,
        { key: row.sessionId || String(index), flexDirection: 'column' },
        h(Text, { color: index === selected ? theme.accent : undefined, bold: theme.styled && index === selected, wrap: 'wrap' }, line),
        prompt ? h(Text, { dimColor: theme.styled, wrap: 'truncate-end' }, `    ${prompt}`) : null,
      );
    }),
  );
}
