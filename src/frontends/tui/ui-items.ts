/**
 * What the terminal UI shows, as plain values: the controller turns runtime
 * events and a loaded history into these, the components only render them.
 * Finished items never change again, so they can live in Ink's static region.
 */
import type { SessionRecoveryKind } from '../../recovery/plan-types.js';

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
