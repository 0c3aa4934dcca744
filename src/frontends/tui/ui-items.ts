/**
 * What the terminal UI shows, as plain values: the controller turns runtime
 * events and a loaded history into these, the components only render them.
 * Finished items never change again, so they can live in Ink's static region.
 */
import type { SessionRecoveryKind } from '../../recovery/plan-types.js';
import { stripControlSequences as strip } from '../shared/output-sink.js';

/** The statuses a person needs: "unknown" is a call whose outcome nobody recorded (a crash). */
export type ToolStatus = 'running' | 'done' | 'failed' | 'denied' | 'cancelled' | 'unknown';

export type UiItem =
  | { id: string; type: 'user'; text: string }
  | { id: string; type: 'assistant'; text: string }
  | { id: string; type: 'thought'; text: string }
  | { id: string; type: 'tool'; callId: string; name: string; args: Record<string, unknown>; status: ToolStatus; output: string }
  /** The recovery notice of a non-clean plan (label INFO): exactly one per resume of such a plan. */
  | { id: string; type: 'info'; kind: SessionRecoveryKind; title: string; lines: string[]; actions: string[] }
  /** Other labelled blocks: a read-only holder, the full plan, help, the session list. */
  | { id: string; type: 'panel'; label: string; title: string; lines: string[]; tone: 'note' | 'warning' }
  | { id: string; type: 'error'; code: string; message: string }
  | { id: string; type: 'status'; text: string };

export type ItemOf<T extends UiItem['type']> = Extract<UiItem, { type: T }>;

/**
 * The item with every text it shows stripped of terminal control sequences: session
 * content comes from elsewhere too (imports, Qwen Code logs, a shared home) and must not
 * retitle the window or clear the screen. Tool arguments are shown as JSON, escaped already.
 */
export function sanitizedItem(item: UiItem): UiItem {
  switch (item.type) {
    case 'user':
    case 'assistant':
    case 'thought':
    case 'status':
      return { ...item, text: strip(item.text) };
    case 'tool':
      return { ...item, name: strip(item.name), output: strip(item.output) };
    case 'info':
      return { ...item, title: strip(item.title), lines: item.lines.map(strip), actions: item.actions.map(strip) };
    case 'panel':
      return { ...item, title: strip(item.title), lines: item.lines.map(strip) };
    case 'error':
      return { ...item, message: strip(item.message) };
  }
}
