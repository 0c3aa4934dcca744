/**
 * buildSessionRecoveryPlan: the one pure function every entrypoint uses.
 * Same input, same plan: no I/O, no clock, no randomness.
 */
import { apiHistoryView } from '../session/api-history.js';
import type { LoadedSession } from '../session/conversation.js';
import type { Content, Part, RecoveryRepair, SessionRecoveryKind } from '../session/records.js';
import { detectTurnInterruption, type TailAnalysis } from './detect-interruption.js';
import { derivePlanId } from './plan-id.js';
import type { BuildPlanInput, RecoveryCause, RecoveryContinuation, SessionRecoveryPlan } from './plan-types.js';
import { decidePolicy } from './recovery-policy.js';
import { repairHistory } from './repair-history.js';
import { buildVisibleNotice } from './visible-notice.js';

function kindOf(degraded: boolean, tail: TailAnalysis): SessionRecoveryKind {
  if (degraded) return 'degraded_history';
  if (tail.state === 'complete') return 'clean';
  return tail.state;
}

function causeOf(input: BuildPlanInput, tail: TailAnalysis): RecoveryCause {
  if (input.conversation.afterLastModel.turnAborted.length > 0) return 'aborted';
  if (tail.state === 'complete') return 'none';
  return input.conversation.writtenByMend ? 'crash' : 'unknown';
}

function lastModelIndex(history: readonly Content[]): number {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]?.role === 'model') return i;
  return -1;
}

function describeParts(parts: readonly Part[], synthetic: readonly string[]): string {
  const texts = parts.filter((p) => typeof p.text === 'string' && p.text.length > 0).map((p) => p.text);
  const results = parts.filter((p) => p.functionResponse).length;
  const pieces: string[] = [];
  if (results > 0) {
    pieces.push(
      `${results} tool result${results === 1 ? '' : 's'}${synthetic.length > 0 ? ` (${synthetic.length} marked failed: outcome unknown)` : ''}`,
    );
  }
  if (texts.length > 0) pieces.push(texts.join('\n'));
  return pieces.join('; ');
}

function buildContinuation(
  kind: SessionRecoveryKind,
  apiHistory: readonly Content[],
  synthesized: readonly string[],
): RecoveryContinuation | undefined {
  if (kind !== 'interrupted_prompt' && kind !== 'interrupted_turn') return undefined;
  // Everything after the last model entry of the history that is sent: executing the
  // continuation sends apiHistory as it is, so these parts reach the model exactly once.
  const parts = apiHistory.slice(lastModelIndex(apiHistory) + 1).flatMap((entry) => entry.parts);
  const syntheticCallIds = parts
    .map((p) => p.functionResponse?.id)
    .filter((id): id is string => id !== undefined && synthesized.includes(id));
  return {
    mode: kind === 'interrupted_turn' ? 'tool_result_parts' : 'retry_user_parts',
    parts: structuredClone(parts),
    displayText: describeParts(parts, syntheticCallIds),
    syntheticCallIds,
  };
}

export function buildSessionRecoveryPlan(input: BuildPlanInput): SessionRecoveryPlan {
  const { conversation } = input;
  const historyGaps = input.historyGaps ?? [];
  const diagnostics = input.diagnostics ?? [];

  // 1. The history as written. Classification happens on this, before any repair.
  // A view of the records, not a copy: plans are immutable (see SessionRecoveryPlan),
  // and copying every part of a long history was a third of the planning time.
  const originalApiHistory = apiHistoryView(conversation);
  const liveGaps = historyGaps.filter((g) => !g.beforeCheckpoint);
  const liveCycle = diagnostics.some((d) => d.code === 'parent_cycle' && !d.beforeCheckpoint);
  const tail = detectTurnInterruption(originalApiHistory);
  const kind = kindOf(liveGaps.length > 0 || liveCycle, tail);
  const cause = causeOf(input, tail);
  const previousAttempts = conversation.afterLastModel.recoveryRecords.length;

  // 2. The provider-safe history. What the repair leaves alone is shared, not cloned.
  const repaired = repairHistory(originalApiHistory, { shareUnchanged: true });
  const repairs: RecoveryRepair[] = [
    ...liveGaps.map((g): RecoveryRepair => ({ type: 'history_gap', childUuid: g.childUuid, missingParentUuid: g.missingParentUuid })),
    ...repaired.repairs,
  ];

  // 3. Continuation and policy.
  const continuation = buildContinuation(kind, repaired.history, repaired.synthesizedCallIds);
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
    tail: originalApiHistory.slice(Math.max(0, tail.lastModelIndex)),
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
  });

  const plan: SessionRecoveryPlan = {
    planId,
    sessionId: input.sessionId,
    kind,
    originalApiHistory,
    apiHistory: repaired.history,
    repairs,
    ...policy,
    diagnostics: [...diagnostics],
    leafUuid: conversation.leafUuid,
    cause,
    previousAttempts,
  };
  if (visibleNotice !== undefined) plan.visibleNotice = visibleNotice;
  if (continuation !== undefined) plan.continuation = continuation;
  return plan;
}

/** The plan of a loaded session, under the id its records carry: what every entrypoint builds. */
export function buildPlanForSession(loaded: LoadedSession, options: BuildPlanInput['options'] = {}): SessionRecoveryPlan {
  return buildSessionRecoveryPlan({
    sessionId: loaded.conversation.sessionId,
    conversation: loaded.conversation,
    historyGaps: loaded.historyGaps,
    diagnostics: loaded.diagnostics,
    options,
  });
}
