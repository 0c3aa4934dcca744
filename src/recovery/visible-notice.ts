/**
 * The one-paragraph notice a person sees on resume. Counts are explicit, and an
 * aborted turn reads differently from a crash.
 */
import type { LoadDiagnostic } from '../session/conversation.js';
import type { RecoveryRepair, SessionRecoveryKind } from '../session/records.js';
import type { ActiveWriter, RecoveryCause, RecoveryLastError } from './plan-types.js';

/** `1 record`, `2 records`: a count with its noun (`many` for irregular plurals). Every human-readable count uses it. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** At most this many call ids are named; a turn with 160k calls gets a count, not a list. */
const MAX_LISTED_CALLS = 10;

function listCalls(ids: readonly string[]): string {
  if (ids.length <= MAX_LISTED_CALLS) return ids.join(', ');
  return `${ids.slice(0, MAX_LISTED_CALLS).join(', ')} and ${ids.length - MAX_LISTED_CALLS} more`;
}

function stopPhrase(cause: RecoveryCause, abortReason: string | undefined, lastError: RecoveryLastError | null): string {
  switch (cause) {
    case 'aborted':
      return `The previous turn was aborted${abortReason ? ` (${abortReason})` : ''}`;
    case 'failed':
      return lastError ? `The previous turn failed with ${lastError.code}: ${lastError.message}` : 'The previous turn failed';
    case 'crash':
      return 'The previous session crashed';
    // Nothing known about how it stopped (or nothing stopped): no cause is claimed.
    case 'none':
    case 'unknown':
    case 'running':
      return 'The previous session stopped';
  }
}

/** What the tail of a session that is still being written holds, without calling anything failed. */
function liveTail(input: { kind: SessionRecoveryKind; unfinishedCalls: readonly string[]; continuationPartCount: number }): string[] {
  switch (input.kind) {
    case 'interrupted_turn':
      return [`Its current turn has ${plural(input.unfinishedCalls.length, 'tool call')} without a recorded result yet (${listCalls(input.unfinishedCalls)}).`];
    case 'interrupted_prompt':
      return [`Its current turn is waiting for the model (${plural(input.continuationPartCount, 'user part')}).`];
    case 'degraded_history':
      return ['The session history is damaged: only the records after the damage can be used.'];
    case 'clean':
      return [];
  }
}

export function buildVisibleNotice(input: {
  kind: SessionRecoveryKind;
  cause: RecoveryCause;
  abortReason?: string;
  repairs: readonly RecoveryRepair[];
  diagnostics: readonly LoadDiagnostic[];
  unfinishedCalls: readonly string[];
  continuationPartCount: number;
  previousAttempts: number;
  gapCount: number;
  hasCycle: boolean;
  activeWriter?: ActiveWriter | null;
  lastError?: RecoveryLastError | null;
  sidechainRecords?: number;
}): string | undefined {
  const sentences: string[] = [];
  const stop = stopPhrase(input.cause, input.abortReason, input.lastError ?? null);
  const writer = input.activeWriter;
  if (writer) {
    // Said first: whatever the tail looks like, the session is not stopped.
    sentences.push(
      `The session is in use by ${writer.host} pid ${writer.pid} since ${writer.since}${writer.epoch !== undefined ? ` (lease epoch ${writer.epoch})` : ''}` +
        ` (${writer.store} store): it is running, not crashed, and cannot be continued until that process ends.`,
    );
  }

  if (writer) sentences.push(...liveTail(input));
  // A live session has not stopped: its open calls may still be running, so nothing
  // about failed calls or continuing applies (liveTail says what its tail holds).
  else
    switch (input.kind) {
      case 'interrupted_turn':
        sentences.push(
          `${stop} with ${plural(input.unfinishedCalls.length, 'unfinished tool call')} (${listCalls(input.unfinishedCalls)}).`,
          `${input.unfinishedCalls.length === 1 ? 'It was' : 'They were'} marked as failed with an unknown outcome so the history can be sent safely; nothing is re-run automatically.`,
          'If you continue, the model sees the failure and should check the current state before retrying.',
        );
        break;
      case 'interrupted_prompt':
        sentences.push(
          `${stop} before the model answered: ${plural(input.continuationPartCount, 'unanswered user part')}.`,
          'If you continue, they are sent to the model once.',
        );
        break;
      case 'degraded_history': {
        const damage = [input.gapCount > 0 ? plural(input.gapCount, 'history gap') : undefined, input.hasCycle ? 'a parent cycle' : undefined].filter(Boolean);
        sentences.push(
          `The session history is damaged (${damage.join(' and ')}): only the records after the damage can be used.`,
          'It will not be continued automatically; a new prompt needs --accept-degraded.',
        );
        if (input.cause === 'aborted' || input.cause === 'failed') sentences.push(`${stop}.`);
        break;
      }
      case 'clean':
        if (input.cause === 'aborted') sentences.push(`${stop}; its partial answer was kept.`);
        if (input.cause === 'failed') sentences.push(`${stop}.`);
        break;
    }

  const fixes = input.repairs.filter((r) => r.type !== 'history_gap' && r.type !== 'synthesized_tool_result');
  // A set: a turn can hold 160k calls, and includes() per repair made this quadratic.
  const unfinished = new Set(input.unfinishedCalls);
  const olderSynthetic = input.repairs.filter((r) => r.type === 'synthesized_tool_result' && !unfinished.has(r.callId));
  const repaired = fixes.length + olderSynthetic.length;
  if (repaired > 0) sentences.push(`${plural(repaired, 'repair')} of older history applied (not written to the log).`);
  const damagedLines = input.diagnostics.filter((d) => d.code === 'malformed_line' || d.code === 'invalid_record' || d.code === 'torn_tail').length;
  if (damagedLines > 0) sentences.push(`${plural(damagedLines, 'damaged line')} skipped.`);
  const conflicts = input.diagnostics.filter((d) => d.code === 'conflicting_uuid').length;
  if (conflicts > 0) sentences.push(`${plural(conflicts, 'record')} set aside: its uuid was already used by a record of another type.`);
  const foreign = input.diagnostics.filter((d) => d.code === 'mixed_session_id').length;
  if (foreign > 0) sentences.push(`${plural(foreign, 'line')} of another session skipped.`);
  if ((input.sidechainRecords ?? 0) > 0) {
    sentences.push(`${plural(input.sidechainRecords!, 'subagent record')} set aside (not the main history).`);
  }
  if (input.previousAttempts > 0) {
    sentences.push(`${plural(input.previousAttempts, 'earlier recovery attempt')} did not complete.`);
  }
  return sentences.length > 0 ? sentences.join(' ') : undefined;
}
