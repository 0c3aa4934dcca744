/**
 * A plan from a session's outline (issue 11): the recovery line of a 100k-record
 * session without holding 100k full records.
 *
 * The store's outline pass (outline-reader.ts) keeps of every record only what the
 * loader and the plan rules read. The loader runs on it as on a full read
 * (buildConversationFrom, one algorithm for both) and reads whole only the tail from
 * the last model entry on: what the plan classifies by content, hashes and continues
 * with (the whole chain when there is no model entry). The history the plan is built
 * on is the outline's before the tail and the full records' from there on, so every
 * rule sees what it would see on full records (test/runtime/outline-plan.test.ts holds
 * the plans equal on the corpus and on generated logs).
 *
 * What needs the histories themselves (a model request, `plan --json --full`, a
 * replay) reads them through `plan.apiHistory`, `plan.originalApiHistory` and
 * `loaded.conversation.records`: getters that read the chain's full records back by
 * byte range the first time (synchronously, about one sequential pass over the file)
 * and rebuild both histories with planHistories, the function the plan was built with.
 */
import { buildPlanForSession, planHistories, summarizeRecoveryPlan } from '../recovery/build-plan.js';
import type { HistorySource } from '../recovery/history-source.js';
import { rememberApiEntryCount } from '../recovery/plan-facts.js';
import type { BuildPlanInput, SessionRecoveryPlan } from '../recovery/plan-types.js';
import { buildConversation, buildConversationFrom, type BuildOptions } from '../session/conversation-loader.js';
import { rememberRecordedCwd } from '../session/conversation-facts.js';
import type { LoadedSession } from '../session/conversation.js';
import type { SessionOutline } from '../session/outline/outline-source.js';
import { isModelEntry } from '../session/model-entry.js';
import type { PartsShape } from '../session/record-outline.js';
import type { ChatRecord, Content, Part } from '../session/records.js';

export interface OutlinePlan {
  loaded: LoadedSession;
  plan: SessionRecoveryPlan;
}

export function planFromOutline(
  outline: SessionOutline,
  build: BuildOptions,
  options: BuildPlanInput['options'],
  activeWriter: BuildPlanInput['activeWriter'],
): OutlinePlan {
  if (outline.whole !== undefined) {
    const loaded = buildConversation(outline.whole, build);
    return { loaded, plan: buildPlanForSession(loaded, options, activeWriter) };
  }

  // The tail is read whole from the last entry that stays a model entry after the repair:
  // the continuation is what follows that entry in the repaired history.
  const { loaded, chain, tailStart, tail } = buildConversationFrom(outline.source, outline.read, build, (i) => outline.keepsModelEntry(i));
  const conversation = loaded.conversation;

  // The history as written, entry by entry: the checkpoint's, the outline's before the
  // tail (made when read, never all held at once), the records' from there on.
  const compressed = conversation.compressedHistory ?? [];
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

  const { plan, apiEntries } = summarizeRecoveryPlan(
    { sessionId: conversation.sessionId, conversation, historyGaps: loaded.historyGaps, diagnostics: loaded.diagnostics, options, activeWriter },
    written,
    keepFrom,
  );

  // What the recovery line shows, kept before the histories become on-demand.
  rememberApiEntryCount(plan, apiEntries);
  let cwd: string | null = null;
  for (let k = chain.length - 1; k >= 0 && cwd === null; k--) cwd = outline.cwd(chain[k]!) ?? null;
  rememberRecordedCwd(conversation, cwd);

  // The histories on demand: the chain before the tail read back in full, once.
  let fullChain: ChatRecord[] | null = tailStart === 0 ? tail : null;
  let histories: ReturnType<typeof planHistories> | null = null;
  const chainRecords = (): ChatRecord[] => (fullChain ??= [...outline.source.full(Array.from(chain.subarray(0, tailStart))), ...tail]);
  const planHistory = (): ReturnType<typeof planHistories> => (histories ??= planHistories({ ...conversation, records: chainRecords() }));
  onDemand(conversation, 'records', chainRecords);
  onDemand(plan, 'originalApiHistory', () => planHistory().originalApiHistory);
  onDemand(plan, 'apiHistory', () => planHistory().repaired.history);
  return { loaded, plan };
}

/**
 * An enumerable property computed on first read and then kept as a plain value, so the
 * object compares, serializes and clones as if it had held the value all along.
 */
function onDemand<T extends object, K extends keyof T>(target: T, key: K, compute: () => T[K]): void {
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get(): T[K] {
      const value = compute();
      Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
      return value;
    },
  });
}
