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
import { buildPlanForSession, buildSessionRecoveryPlan, planHistories } from '../recovery/build-plan.js';
import { rememberApiEntryCount } from '../recovery/plan-facts.js';
import type { BuildPlanInput, SessionRecoveryPlan } from '../recovery/plan-types.js';
import { buildConversation, buildConversationFrom, type BuildOptions } from '../session/conversation-loader.js';
import { pushEntries } from '../session/api-history.js';
import { rememberRecordedCwd } from '../session/conversation-facts.js';
import type { LoadedSession } from '../session/conversation.js';
import type { SessionOutline } from '../session/outline-columns.js';
import type { ChatRecord, Content } from '../session/records.js';

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

  const { loaded, chain, tailStart, tail } = buildConversationFrom(outline.source, outline.read, build);
  const conversation = loaded.conversation;

  // The history as written: the checkpoint's, the outline's before the tail, the records' from there on.
  const written: Content[] = conversation.compressedHistory ? [...conversation.compressedHistory] : [];
  for (let k = 0; k < tailStart; k++) {
    const parts = outline.outlineParts(chain[k]!);
    if (parts !== null && parts.length > 0)
      written.push({ role: outline.source.type(chain[k]!) === 'assistant' ? 'model' : 'user', parts: parts as Content['parts'] });
  }
  pushEntries(written, tail);

  const plan = buildSessionRecoveryPlan({
    sessionId: conversation.sessionId,
    conversation,
    historyGaps: loaded.historyGaps,
    diagnostics: loaded.diagnostics,
    options,
    activeWriter,
    originalApiHistory: written,
  });

  // What the recovery line shows, kept before the histories become on-demand.
  rememberApiEntryCount(plan, plan.apiHistory.length);
  let cwd: string | null = null;
  for (let k = chain.length - 1; k >= 0 && cwd === null; k--) cwd = outline.cwd(chain[k]!) ?? null;
  rememberRecordedCwd(conversation, cwd);

  // The histories on demand: the chain before the tail read back in full, once.
  let fullChain: ChatRecord[] | null = tailStart === 0 ? tail : null;
  let histories: ReturnType<typeof planHistories> | null = null;
  const chainRecords = (): ChatRecord[] => (fullChain ??= [...outline.source.full(chain.slice(0, tailStart)), ...tail]);
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
