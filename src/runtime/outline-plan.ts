/**
 * A plan from a session's outline: the recovery line of a 100k-record session without
 * holding 100k full records.
 *
 * A HistoryReader (src/session/outline/history-reader.ts) gives the store's SessionOutline:
 * of every record only what the loader and the plan rules read. The loader runs on it as
 * on a full read (buildConversationFrom, one algorithm for both) and reads whole only the
 * tail from the last model entry on: what the plan classifies by content, hashes and
 * continues with (the whole chain when there is no model entry). The history the plan is
 * built on is the outline's before the tail and the full records' from there on, so every
 * rule sees what it would see on full records (test/session/outline/history-readers.test.ts
 * holds the plans equal on the corpus and on generated logs, over every reader).
 *
 * The result is a plain value: the plan and the conversation without their histories and
 * records (RecoveryPlanHead, LoadedHead). What needs the histories (a model request,
 * `plan --json --full`, a replay) reads them by an explicit call
 * (SessionRuntime.loadHistory, which reads the session whole).
 */
import { buildPlanForSession, summarizeRecoveryPlan } from '../recovery/build-plan.js';
import type { HistorySource } from '../recovery/history-source.js';
import type { BuildPlanInput, HistoryBefore, RecoveryPlanHead } from '../recovery/plan-types.js';
import { buildConversation, buildConversationFrom, type BuildOptions, type LoadedChain } from '../session/conversation-loader.js';
import type { ConversationHead, LoadedHead } from '../session/conversation.js';
import type { SessionOutline } from '../session/outline/history-reader.js';
import { isModelEntry } from '../session/model-entry.js';
import type { PartsShape } from '../session/parts-shape.js';
import type { Content, Part } from '../session/records.js';

export interface OutlinePlan {
  loaded: LoadedHead;
  plan: RecoveryPlanHead;
}

/**
 * A checkpoint's summary of the records before a window of the log (src/runtime/checkpoint):
 * turns the window's load into the whole session's, or says the window does not continue
 * the prefix the summary describes (null: the caller reads the log whole).
 */
export type PrefixJoin = (window: LoadedChain, source: SessionOutline['source']) => JoinedLoad | null;

export interface JoinedLoad {
  /** The whole session's load (the window's chain and tail, the prefix's counts, gaps and diagnostics). */
  loaded: LoadedChain['loaded'];
  /** What the plan lists and counts for the history before the window's first entry. */
  before: HistoryBefore;
  /** The cwd of the prefix's chain, for a window whose chain names none. */
  cwd: string | null;
}

export function planFromOutline(
  outline: SessionOutline,
  build: BuildOptions,
  options: BuildPlanInput['options'],
  activeWriter: BuildPlanInput['activeWriter'],
): OutlinePlan;
export function planFromOutline(
  outline: SessionOutline,
  build: BuildOptions,
  options: BuildPlanInput['options'],
  activeWriter: BuildPlanInput['activeWriter'],
  prefix: PrefixJoin,
): OutlinePlan | null;
export function planFromOutline(
  outline: SessionOutline,
  build: BuildOptions,
  options: BuildPlanInput['options'],
  activeWriter: BuildPlanInput['activeWriter'],
  prefix?: PrefixJoin,
): OutlinePlan | null {
  if (outline.whole !== undefined && prefix === undefined) {
    // The reference reader's outline: the full load and plan, without their histories.
    return headsOf(buildConversation(outline.whole, build), (loaded) => buildPlanForSession(loaded, options, activeWriter));
  }

  // The tail is read whole from the last entry that stays a model entry after the repair:
  // the continuation is what follows that entry in the repaired history.
  const window = buildConversationFrom(outline.source, outline.read, build, (i) => outline.keepsModelEntry(i));
  const { chain, tailStart, tail } = window;
  // The history as written, entry by entry: the checkpoint's, the outline's before the
  // tail (made when read, never all held at once), the records' from there on. After a
  // prefix's summary, only the window's own entries (the summary stands for the rest).
  const compressed = window.loaded.conversation.compressedHistory ?? [];
  const joined = prefix === undefined ? null : prefix(window, outline.source);
  if (prefix !== undefined && joined === null) return null;
  const loaded = joined?.loaded ?? window.loaded;
  const conversation = loaded.conversation;
  // Chain positions of the entries (records with parts).
  let entries = 0;
  const entryAll = new Int32Array(chain.length);
  for (let k = 0; k < chain.length; k++) if (outline.partCount(chain[k]!) > 0) entryAll[entries++] = k;
  const entryAt = entryAll.subarray(0, entries);
  const source = outline.source;
  // What shapeAt hands out, reused (as the outline's shapes are).
  const counted: { role: Content['role']; shape: PartsShape } = { role: 'user', shape: { parts: [], id: () => undefined } };
  const written: HistorySource = {
    length: compressed.length + entryAt.length,
    at: (e) => {
      if (e < compressed.length) return compressed[e];
      const k = entryAt[e - compressed.length]!;
      const role = source.type(chain[k]!) === 'assistant' ? 'model' : 'user';
      const whole = k >= tailStart ? tail[k - tailStart]! : null;
      const parts = whole !== null ? (whole.type === 'system' ? [] : whole.message.parts) : (outline.outlineParts(chain[k]!) as Part[]);
      return { role, parts };
    },
    isModelEntry: (e) => {
      if (e < compressed.length) return compressed[e]!.role === 'model' && isModelEntry(compressed[e]!.parts);
      return source.isModel(chain[entryAt[e - compressed.length]!]!);
    },
    partCount: () => {
      let n = 0;
      for (const entry of compressed) n += entry.parts.length;
      for (const k of entryAt) n += outline.partCount(chain[k]!);
      return n;
    },
    shapeAt: (e) => {
      if (e < compressed.length) return undefined;
      const k = entryAt[e - compressed.length]!;
      if (k >= tailStart) return undefined;
      const shape = outline.partsShape?.(chain[k]!);
      if (shape === undefined) return undefined;
      counted.role = source.type(chain[k]!) === 'assistant' ? 'model' : 'user';
      counted.shape = shape;
      return counted;
    },
  };
  let keepFrom = compressed.length;
  while (keepFrom - compressed.length < entryAt.length && entryAt[keepFrom - compressed.length]! < tailStart) keepFrom++;

  const plan = summarizeRecoveryPlan(
    {
      sessionId: conversation.sessionId,
      conversation,
      historyGaps: loaded.historyGaps,
      diagnostics: loaded.diagnostics,
      options,
      activeWriter,
      ...(joined !== null ? { before: joined.before } : {}),
    },
    written,
    keepFrom,
  );

  // The directory the recovery line names: the last chain record's that names one.
  let cwd: string | null = null;
  for (let k = chain.length - 1; k >= 0 && cwd === null; k--) cwd = outline.cwd(chain[k]!) ?? null;
  cwd ??= joined?.cwd ?? null;
  const { records: _tail, ...head } = conversation;
  const conversationHead: ConversationHead = { ...head, recordedCwd: cwd };
  return { loaded: { ...loaded, conversation: conversationHead }, plan };
}

/** A full load and its plan as the plain values an outline plan is: without records and histories. */
function headsOf<
  L extends LoadedHead & { conversation: { records: unknown } },
  P extends RecoveryPlanHead & { apiHistory: unknown; originalApiHistory: unknown },
>(loaded: L, planOf: (loaded: L) => P): OutlinePlan {
  const { apiHistory: _api, originalApiHistory: _original, ...plan } = planOf(loaded);
  const { records: _records, ...conversation } = loaded.conversation;
  return { loaded: { ...loaded, conversation }, plan };
}
