/**
 * An API history read entry by entry. The plan rules (detect-interruption.ts,
 * repair-history.ts) read a history through this, so a plan over a session's outline
 * can make each entry when it is read instead of holding a 100k-entry
 * history at once; an array is the ordinary source.
 */
import { isModelEntry } from '../session/model-entry.js';
import type { PartsShape } from '../session/parts-shape.js';
import type { Content } from '../session/records.js';

export interface HistorySource {
  readonly length: number;
  /** The entry at `index`, or undefined for a hole (sparse arrays). May be a new object on every call. */
  at(index: number): Content | undefined;
  /** Whether entry `index` is a model entry (model-entry.ts), without making the entry where the source can. */
  isModelEntry(index: number): boolean;
  /** The number of parts of all entries. */
  partCount(): number;
  /**
   * Entry `index` as its role and a PartsShape (its parts with their ids held apart), for
   * an entry repairHistory only counts (RepairOptions.keepFrom), where the source has
   * entries that way; undefined otherwise (then `at`). Valid until the next call.
   */
  shapeAt?(index: number): EntryShape | undefined;
}

/** An entry as its role and its parts' shape (HistorySource.shapeAt). */
export interface EntryShape {
  readonly role: Content['role'];
  readonly shape: PartsShape;
}

/** An array as a HistorySource: its own entries, holes included. */
export function arraySource(history: readonly Content[]): HistorySource {
  return {
    length: history.length,
    at: (index) => history[index],
    isModelEntry: (index) => {
      const entry = history[index];
      return entry?.role === 'model' && isModelEntry(entry.parts);
    },
    partCount: () => {
      let count = 0;
      for (let e = 0; e < history.length; e++) if (e in history) count += history[e]!.parts.length;
      return count;
    },
  };
}

export function toSource(history: readonly Content[] | HistorySource): HistorySource {
  return Array.isArray(history) ? arraySource(history) : (history as HistorySource);
}
