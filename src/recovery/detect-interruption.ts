/**
 * Classifies the tail of an API history AS WRITTEN. This must run before any
 * repair: once a dangling call is closed by a synthetic result, an interrupted
 * turn looks like an interrupted prompt.
 */
import type { Content } from '../session/records.js';
import { isRealUserContent } from './parts.js';

export type TailState = 'complete' | 'interrupted_prompt' | 'interrupted_turn';

export interface TailAnalysis {
  state: TailState;
  /** Index of the last model entry, or -1 when there is none. */
  lastModelIndex: number;
  /** Calls (with ids) of the last model entry that have no response after it, in call order. */
  danglingCallIds: string[];
}

export function detectTurnInterruption(history: readonly Content[]): TailAnalysis {
  let lastModelIndex = -1;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]?.role === 'model') {
      lastModelIndex = i;
      break;
    }
  }

  const callIds: string[] = [];
  const lastModel = lastModelIndex >= 0 ? history[lastModelIndex] : undefined;
  for (const part of lastModel?.parts ?? []) {
    const id = part.functionCall?.id;
    // Calls without an id can never be paired with a result; the design skips them.
    if (id !== undefined && id !== '' && !callIds.includes(id)) callIds.push(id);
  }

  const answered = new Set<string>();
  let realContent = false;
  for (let i = lastModelIndex + 1; i < history.length; i++) {
    const entry = history[i];
    if (!entry || entry.role !== 'user') continue;
    for (const part of entry.parts) {
      const responseId = part.functionResponse?.id;
      if (part.functionResponse !== undefined) {
        // Results of earlier calls get hoisted and results of no call get dropped:
        // neither is something the user is still waiting on.
        if (responseId !== undefined && callIds.includes(responseId)) {
          answered.add(responseId);
          realContent = true;
        }
      } else if (isRealUserContent(part)) {
        realContent = true;
      }
    }
  }

  const danglingCallIds = callIds.filter((id) => !answered.has(id));
  if (danglingCallIds.length > 0) return { state: 'interrupted_turn', lastModelIndex, danglingCallIds };
  if (realContent) return { state: 'interrupted_prompt', lastModelIndex, danglingCallIds };
  return { state: 'complete', lastModelIndex, danglingCallIds };
}
