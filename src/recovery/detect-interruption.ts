/**
 * Classifies the tail of an API history AS WRITTEN. This must run before any
 * repair: once a dangling call is closed by a synthetic result, an interrupted
 * turn looks like an interrupted prompt.
 *
 * The last model entry is the last one holding something a provider receives
 * (model-entry.ts): an empty or thought-only model entry answers nothing and
 * closes nothing, so the tail is classified as if it were absent.
 *
 * A result answers a call of the last model entry when it is the latest call with
 * the result's id and function name (servers that send `call_0` in every response
 * reuse ids, so a late result of an older call must not close a newer one); a
 * result whose name no call of that id has answers the latest call of its id (it is
 * renamed by the repair). Results may also sit inside the last model entry itself,
 * after their call (a model entry holding its own result): they answer too.
 * Linear in the size of the history.
 */
import type { Content } from '../session/records.js';
import { toSource, type HistorySource } from './history-source.js';
import { isRealUserContent } from './parts.js';

export type TailState = 'complete' | 'interrupted_prompt' | 'interrupted_turn';

export interface TailAnalysis {
  state: TailState;
  /** Index of the last model entry, or -1 when there is none. */
  lastModelIndex: number;
  /** Calls (with ids) of the last model entry that have no response after it, in call order. */
  danglingCallIds: string[];
}

/** Index of the last entry that is a model entry (model-entry.ts), or -1. */
export function lastModelEntryIndex(written: readonly Content[] | HistorySource): number {
  const history = toSource(written);
  for (let i = history.length - 1; i >= 0; i--) if (history.isModelEntry(i)) return i;
  return -1;
}

const key = (id: string, name: string): string => `${id}\u0000${name}`;

export function detectTurnInterruption(written: readonly Content[] | HistorySource): TailAnalysis {
  const history = toSource(written);
  const lastModelIndex = lastModelEntryIndex(history);
  const lastModel = lastModelIndex >= 0 ? history.at(lastModelIndex) : undefined;

  // The last entry's calls by id (the first of a repeated id: the repair drops the others).
  const callIds: string[] = [];
  const nameOf = new Map<string, string>();
  // (id, name) of the calls of earlier model entries that a result can pair with (the
  // first call of an id in an entry; the repair drops the others): older results' calls.
  // Built only when a result's name differs from the last entry's call of its id,
  // which an ordinary log never has: otherwise every plan paid a string and a set entry per call.
  let olderPairs: Set<string> | null = null;
  const olderHas = (id: string, name: string): boolean => {
    if (olderPairs === null) {
      olderPairs = new Set<string>();
      for (let i = 0; i < lastModelIndex; i++) {
        const entry = history.at(i);
        if (entry?.role !== 'model') continue;
        const idsInEntry = new Set<string>();
        for (const part of entry.parts) {
          const c = part?.functionCall;
          if (c?.id === undefined || c.id === '' || idsInEntry.has(c.id)) continue;
          idsInEntry.add(c.id);
          olderPairs.add(key(c.id, c.name));
        }
      }
    }
    return olderPairs.has(key(id, name));
  };
  const answered = new Set<string>();
  /** Whether a result (id, name) answers the last entry's call of that id. */
  const answers = (id: string | undefined, name: string): boolean => {
    if (id === undefined || !nameOf.has(id)) return false;
    // The latest call with this id and name, or, when none has that name, the latest with this id.
    return nameOf.get(id) === name || !olderHas(id, name);
  };
  let realContent = false;

  for (const part of lastModel?.parts ?? []) {
    if (part === undefined) continue;
    const c = part.functionCall;
    // Calls without an id can never be paired with a result, so none is waited for or answered: skipped.
    if (c?.id !== undefined && c.id !== '' && !nameOf.has(c.id)) {
      callIds.push(c.id);
      nameOf.set(c.id, c.name);
    }
    // A result inside the model entry, after its call: the repair splits it out right after.
    const r = part.functionResponse;
    if (r !== undefined && answers(r.id, r.name) && !answered.has(r.id!)) {
      answered.add(r.id!);
      realContent = true;
    }
  }

  for (let i = lastModelIndex + 1; i < history.length; i++) {
    const entry = history.at(i);
    if (!entry) continue;
    for (const part of entry.parts) {
      if (part === undefined) continue;
      if (part.functionResponse !== undefined) {
        // Results of earlier calls get hoisted and results of no call get dropped:
        // neither is something the user is still waiting on. (A result inside a later
        // thought-only model entry is split out to its call like any other.)
        const r = part.functionResponse;
        if (answers(r.id, r.name)) {
          answered.add(r.id!);
          realContent = true;
        }
      } else if (entry.role === 'user' && isRealUserContent(part)) {
        realContent = true;
      }
    }
  }

  const danglingCallIds = callIds.filter((id) => !answered.has(id));
  if (danglingCallIds.length > 0) return { state: 'interrupted_turn', lastModelIndex, danglingCallIds };
  if (realContent) return { state: 'interrupted_prompt', lastModelIndex, danglingCallIds };
  return { state: 'complete', lastModelIndex, danglingCallIds };
}
