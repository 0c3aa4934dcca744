/** The footer: token usage, model, approval mode, session id; wraps in a narrow terminal instead of overflowing. */
import { Box, Text } from 'ink';
import { createElement as h, type ReactElement } from 'react';
import type { TuiState } from '../tui-controller.js';
import type { Theme } from '../theme.js';

export function Footer({ state, theme, width }: { state: TuiState; theme: Theme; width: number }): ReactElement {
  const { inputTokens, outputTokens } = state.view.usage;
  const fields = [
    `tokens ${inputTokens} in / ${outputTokens} out`,
    `model ${state.model ?? '(none)'}`,
    `mode ${state.approvalMode} (shift+tab)`,
    `session ${state.sessionId}`,
    ...(state.readOnly ? ['READ-ONLY'] : []),
  ];
  return h(
    Box,
    { width, flexWrap: 'wrap', columnGap: 2 },
    ...fields.map((f, i) => h(Text, { key: String(i), color: f === 'READ-ONLY' ? theme.warning : theme.muted }, f)),
  );
}
