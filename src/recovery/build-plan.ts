/**
 * buildSessionRecoveryPlan: the one pure function every entrypoint uses.
 * Same input, same plan: no I/O, no clock, no randomness.
 */
import { apiHistoryView, cloneJson } from '../session/api-history.js';
import type { ConversationRecord, LoadedSession } from '../session/conversation.js';
import type { Content, Part, RecoveryRepair, SessionRecoveryKind } from '../session/records.js';
import { detectTurnInterruption, lastModelEntryIndex, type TailAnalysis } from './detect-interruption.js';
import { derivePlanId } from './plan-id.js';
import type { BuildPlanInput, RecoveryCause, RecoveryContinuation, RecoveryLastError, RecoveryPlanHead, SessionRecoveryPlan } from './plan-types.js';
import { decidePolicy } from './recovery-policy.js';
import { arraySource, type HistorySource } from './history-source.js';
import { repairHistory, type RepairResult } from './repair-history.js';
import { buildVisibleNotice } from './visible-notice.js';

function kindOf(degraded: boolean, tail: TailAnalysis): SessionRecoveryKind {
  if (degraded) return 'degraded_history';
  if (tail.state === 'complete') return 'clean';
  return tail.state;
}

/**
 * How the tail ended, from the tail only: a live lease holder means it has not ended;
 * otherwise the marker that ends the tail (an abort or a failure the tail did not go
 * on past: an abort followed by a new prompt that then crashed is a crash).
 */
function causeOf(input: BuildPlanInput, tail: TailAnalysis): RecoveryCause {
  if (input.activeWriter) return 'running';
  const ended = endMarker(input);
  if (ended === 'turn_aborted') return 'aborted';
  if (ended === 'turn_failed') return 'failed';
  if (tail.state === 'complete') return 'none';
  return input.conversation.writtenByMend ? 'crash' : 'unknown';
}

function endMarker(input: BuildPlanInput): 'turn_aborted' | 'turn_failed' | null {
  const after = input.conversation.afterLastModel;
  // Conversations built without endedBy (older callers): the last marker decides.
  if (after.endedBy === undefined) {
    if ((after.turnFailed?.length ?? 0) > 0) return 'turn_failed';
    return after.turnAborted.length > 0 ? 'turn_aborted' : null;
  }
  return after.endedBy?.subtype ?? null;
}

function lastErrorOf(input: BuildPlanInput, cause: RecoveryCause): RecoveryLastError | null {
  if (cause !== 'failed') return null;
  const after = input.conversation.afterLastModel;
  const endedBy = after.endedBy;
  const marker = after.turnFailed?.find((m) => m.uuid === endedBy?.uuid) ?? after.turnFailed?.at(-1);
  return marker ? { code: marker.code, message: marker.message } : null;
}

function describeParts(parts: readonly Part[], synthetic: readonly string[]): string {
  const texts = parts.filter((p) => typeof p.text === 'string' && p.text.length > 0).map((p) => p.text);
  const results = parts.filter((p) => p.functionResponse).length;
  const pieces: string[] = [];
  if (results > 0) {
    pieces.push(`${results} tool result${results === 1 ? '' : 's'}${synthetic.length > 0 ? ` (${synthetic.length} marked failed: outcome unknown)` : ''}`);
  }
  if (texts.length > 0) pieces.push(texts.join('\n'));
  return pieces.join('; ');
}

function buildContinuation(kind: SessionRecoveryKind, apiHistory: readonly Content[], synthetic: ReadonlySet<Part>): RecoveryContinuation | undefined {
  if (kind !== 'interrupted_prompt' && kind !== 'interrupted_turn') return undefined;
  // Everything after the last model entry of the history that is sent: executing the
  // continuation sends apiHistory as it is, so these parts reach the model exactly once.
  const parts = apiHistory.slice(lastModelEntryIndex(apiHistory) + 1).flatMap((entry) => entry.parts);
  // The synthetic parts themselves, not their ids: a recorded result of a call that reuses
  // the id of an earlier, synthesized one is not marked failed.
  const syntheticCallIds = parts.filter((p) => synthetic.has(p)).map((p) => p.functionResponse!.id ?? '');
  return {
    mode: kind === 'interrupted_turn' ? 'tool_result_parts' : 'retry_user_parts',
    // cloneJson: structuredClone was most of the plan time over a turn of 160k calls.
    parts: cloneJson(parts) as Part[],
    displayText: describeParts(parts, syntheticCallIds),
    syntheticCallIds,
  };
}

export function buildSessionRecoveryPlan(input: BuildPlanInput): SessionRecoveryPlan {
  const written = input.originalApiHistory ?? apiHistoryView(input.conversation);
  const { plan: head, repaired } = planOver(input, arraySource(written), 0);
  return { ...head, originalApiHistory: written, apiHistory: repaired.history };
}

/**
 * A plan without its histories: everything else of buildSessionRecoveryPlan's plan, built
 * by the same code over a history read entry by entry, whose entries before `keepFrom`
 * are only read, not kept (a plan over an outline makes them when read). `keepFrom` must
 * not be past the last entry that stays a model entry after the repair
 * (keepsModelEntry): the continuation is what follows it.
 */
export function summarizeRecoveryPlan(input: BuildPlanInput, written: HistorySource, keepFrom: number): RecoveryPlanHead {
  return planOver(input, written, keepFrom).plan;
}

function planOver(input: BuildPlanInput, originalApiHistory: HistorySource, keepFrom: number): { plan: RecoveryPlanHead; repaired: RepairResult } {
  const { conversation } = input;
  const historyGaps = input.historyGaps ?? [];
  const diagnostics = input.diagnostics ?? [];

  // 1. The history as written. Classification happens on this, before any repair.
  const liveGaps = historyGaps.filter((g) => !g.beforeCheckpoint);
  const liveCycle = diagnostics.some((d) => d.code === 'parent_cycle' && !d.beforeCheckpoint);
  const tail = detectTurnInterruption(originalApiHistory);
  const kind = kindOf(liveGaps.length > 0 || liveCycle, tail);
  const cause = causeOf(input, tail);
  const lastError = lastErrorOf(input, cause);
  const activeWriter = input.activeWriter ? structuredClone(input.activeWriter) : null;
  const sidechainRecords = conversation.sidechainRecords ?? 0;
  const previousAttempts = conversation.afterLastModel.recoveryRecords.length;

  // 2. The provider-safe history. What the repair leaves alone is shared, not cloned.
  const repaired = repairHistory(originalApiHistory, { shareUnchanged: true, keepFrom });
  const repairs: RecoveryRepair[] = [
    ...liveGaps.map((g): RecoveryRepair => ({ type: 'history_gap', childUuid: g.childUuid, missingParentUuid: g.missingParentUuid })),
    ...(input.before?.repairs ?? []),
    ...repaired.repairs,
  ];

  // 3. Continuation and policy.
  const continuation = buildContinuation(kind, repaired.history, repaired.syntheticParts);
  const policy = decidePolicy({
    kind,
    cause,
    previousAttempts,
    allowAutoContinue: input.options?.allowAutoContinue === true,
  });

  const planId = derivePlanId({
    sessionId: input.sessionId,
    leafUuid: conversation.leafUuid,
    kind,
    tail: entriesFrom(originalApiHistory, Math.max(0, tail.lastModelIndex)),
  });

  const unfinishedCalls = tail.state === 'interrupted_turn' ? tail.danglingCallIds : [];
  const visibleNotice = buildVisibleNotice({
    kind,
    cause,
    abortReason: conversation.afterLastModel.turnAborted.at(-1)?.reason,
    repairs,
    diagnostics,
    unfinishedCalls,
    continuationPartCount: continuation?.parts.length ?? 0,
    previousAttempts,
    gapCount: liveGaps.length,
    hasCycle: liveCycle,
    activeWriter,
    lastError,
    sidechainRecords,
  });

  const plan: RecoveryPlanHead = {
    planId,
    sessionId: input.sessionId,
    kind,
    apiEntryCount: (input.before?.entries ?? 0) + (repaired.skipped ?? 0) + repaired.history.length,
    repairs,
    ...policy,
    diagnostics: [...diagnostics],
    leafUuid: conversation.leafUuid,
    cause,
    previousAttempts,
    activeWriter,
    lastError,
    sidechainRecords,
  };
  if (visibleNotice !== undefined) plan.visibleNotice = visibleNotice;
  if (continuation !== undefined) plan.continuation = continuation;
  return { plan, repaired };
}

/** history.slice(from) of a source (holes stay holes, as slice keeps them). */
function entriesFrom(history: HistorySource, from: number): Content[] {
  const out = new Array<Content>(Math.max(0, history.length - from));
  for (let i = from; i < history.length; i++) {
    const entry = history.at(i);
    if (entry !== undefined) out[i - from] = entry;
  }
  return out;
}

/** The plan of a loaded session, under the id its records carry: what every entrypoint builds. */
export function buildPlanForSession(
  loaded: LoadedSession,
  options: BuildPlanInput['options'] = {},
  activeWriter: BuildPlanInput['activeWriter'] = null,
): SessionRecoveryPlan {
  return buildSessionRecoveryPlan({
    sessionId: loaded.conversation.sessionId,
    conversation: loaded.conversation,
    historyGaps: loaded.historyGaps,
    diagnostics: loaded.diagnostics,
    options,
    activeWriter,
  });
}
