/**
 * The root component: the static region of finished items, the live region
 * (streaming text, running tools), then whatever waits for the person (an
 * approval, a confirmation, the session picker, or the prompt line) and the
 * footer. Keys go to the controller; nothing here talks to the runtime.
 */
import { Box, Static, Text, useInput, useStdout, type Key } from 'ink';
import { createElement as h, useRef, useState, useSyncExternalStore, type ReactElement } from 'react';
import * as buf from '../input-buffer.js';
import type { TuiController, TuiState } from '../tui-controller.js';
import type { UiItem } from '../ui-items.js';
import { themeFor } from '../theme.js';
import { ApprovalBox, DegradedConfirm, SessionPicker } from './dialogs.js';
import { Footer } from './footer.js';
import { ItemView } from './item-view.js';
import { PromptLine } from './prompt-line.js';

export interface AppProps {
  controller: TuiController;
  noColor: boolean;
  /** Overrides the terminal's width (tests; a terminal that reports none). */
  columns?: number;
}

export function App({ controller, noColor, columns }: AppProps): ReactElement {
  const state = useSyncExternalStore(controller.subscribe, controller.getState);
  const [buffer, setBuffer] = useState<buf.InputBuffer>(buf.emptyBuffer);
  // Keys can arrive faster than React renders: the handler reads the latest buffer and state, not the render's.
  const latest = useRef(buffer);
  const { stdout } = useStdout();
  const width = Math.max(20, columns ?? stdout.columns ?? 80);
  const theme = themeFor(noColor);
  // What the live region may use of the screen: the rest holds the prompt, the footer and a dialog.
  const liveRows = Math.max(4, (stdout.rows ?? 24) - 14);

  useInput((input, key) => {
    const next = handleKey(controller, controller.getState(), latest.current, input, key);
    if (next !== latest.current) {
      latest.current = next;
      setBuffer(next);
    }
  });

  const item = (i: UiItem) => h(ItemView, { key: i.id, item: i, theme, width, showThoughts: state.showThoughts });
  const waiting = state.approval
    ? h(ApprovalBox, { call: state.approval, theme, width })
    : state.confirmDegraded !== null
      ? h(DegradedConfirm, { theme, width })
      : state.picker
        ? h(SessionPicker, { rows: state.picker.rows, selected: state.picker.selected, theme, width })
        : h(PromptLine, { buffer, theme, width, hint: hintFor(state) });
  return h(
    Box,
    { flexDirection: 'column', width },
    h(Static<UiItem>, { key: `static-${state.epoch}`, items: state.view.done, children: item }),
    ...state.view.live.map((i) => h(ItemView, { key: i.id, item: i, theme, width, showThoughts: state.showThoughts, maxRows: liveRows })),
    state.busy && !state.approval ? h(Text, { dimColor: theme.styled }, 'working… (ctrl-c to stop)') : null,
    waiting,
    h(Footer, { state, theme, width }),
  );
}

function hintFor(state: TuiState): string | null {
  if (state.exitArmed) return 'Press Ctrl-C again to exit';
  if (state.readOnly) return 'read-only: /resume, /clear, /plan, /quit';
  return null;
}

/** One key press: returns the next input buffer (the same object when the buffer did not change). */
export function handleKey(controller: TuiController, state: TuiState, b: buf.InputBuffer, input: string, key: Key): buf.InputBuffer {
  if (key.ctrl && input === 'c') {
    // Ctrl-C first clears a typed line; with nothing typed it stops the turn, or arms and then exits.
    if (b.text !== '' && !state.busy && !state.approval) return buf.clear(b);
    controller.interrupt();
    return b;
  }
  if (state.approval) {
    if (input === 'y' || key.return) controller.answerApproval('once');
    else if (input === 'a') controller.answerApproval('always');
    else if (input === 'n' || key.escape) controller.answerApproval('deny');
    return b;
  }
  if (state.confirmDegraded !== null) {
    if (input === 'y') controller.confirmDegraded(true);
    else if (input === 'n' || key.escape) controller.confirmDegraded(false);
    return b;
  }
  if (state.picker) {
    if (key.upArrow) controller.movePicker(-1);
    else if (key.downArrow) controller.movePicker(1);
    else if (key.return) void controller.choosePicked();
    else if (key.escape) controller.cancelPicker();
    return b;
  }
  controller.disarmExit();
  if (key.ctrl && input === 'd') {
    if (b.text === '') void controller.quit();
    return b;
  }
  if (key.ctrl && input === 'o') {
    controller.toggleThoughts();
    return b;
  }
  if (key.tab && key.shift) {
    controller.cycleApprovalMode();
    return b;
  }
  if (key.return) {
    if (key.meta) return buf.insert(b, '\n');
    if (buf.wantsNewline(b)) return buf.newlineForBackslash(b);
    const { text, buffer } = buf.submit(b);
    if (text !== null) controller.submit(text);
    return buffer;
  }
  if (key.ctrl && input === 'j') return buf.insert(b, '\n');
  if (key.backspace || key.delete) return buf.backspace(b);
  if (key.leftArrow) return buf.moveLeft(b);
  if (key.rightArrow) return buf.moveRight(b);
  if (key.upArrow) return buf.up(b);
  if (key.downArrow) return buf.down(b);
  if (key.home || (key.ctrl && input === 'a')) return buf.lineStart(b);
  if (key.end || (key.ctrl && input === 'e')) return buf.lineEnd(b);
  if (key.ctrl && input === 'u') return buf.clear(b);
  if (key.ctrl && input === 'w') return buf.deleteWordBefore(b);
  if (key.ctrl || key.escape || input === '') return b;
  // Keys typed faster than they are read arrive as one chunk: one line ending in CR is text plus Enter,
  // and the editing keys in it (Ctrl-A, Ctrl-E, Ctrl-W...) are applied, never typed as text.
  // A multi-line paste stays in the buffer, to be sent with Enter.
  if (/^[^\r\n]+\r$/.test(input)) return handleKey(controller, state, buf.applyChunk(b, input.slice(0, -1)), '', { ...key, return: true });
  return buf.hasControlKeys(input) ? buf.applyChunk(b, input) : buf.insert(b, input);
}
