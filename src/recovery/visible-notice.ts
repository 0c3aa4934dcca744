/**
 * The one-paragraph notice a person sees on resume. Counts are explicit, and an
 * aborted turn reads differently from a crash.
 */
import type { LoadDiagnostic } from '../session/conversation.js';
import type { RecoveryRepair, SessionRecoveryKind } from '../session/records.js';
import type { RecoveryCause } from './plan-types.js';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function stopPhrase(cause: RecoveryCause, abortReason: string | undefined): string {
  switch (cause) {
    case 'aborted':
      return `The previous turn was aborted${abortReason ? ` (${abortReason})` : ''}`;
    case 'crash':
      return 'The previous session crashed';
    default:
      return 'The previous session stopped';
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
}): string | undefined {
  const sentences: string[] = [];
  const stop = stopPhrase(input.cause, input.abortReason);

  switch (input.kind) {
    case 'interrupted_turn':
      sentences.push(
        `${stop} with ${plural(input.unfinishedCalls.length, 'unfinished tool call')} (${input.unfinishedCalls.join(', ')}).`,
        'They were marked as failed with an unknown outcome so the history can be sent safely; nothing is re-run automatically.',
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
      const damage = [
        input.gapCount > 0 ? plural(input.gapCount, 'history gap') : undefined,
        input.hasCycle ? 'a parent cycle' : undefined,
      ].filter(Boolean);
      sentences.push(
        `The session history is damaged (${damage.join(' and ')}): only the records after the damage can be used.`,
        'It will not be continued automatically; a new prompt needs --accept-degraded.',
      );
      if (input.cause === 'aborted') sentences.push(`${stop}.`);
      break;
    }
    case 'clean':
      if (input.cause === 'aborted') sentences.push(`${stop}; its partial answer was kept.`);
      break;
  }

  const fixes = input.repairs.filter((r) => r.type !== 'history_gap' && r.type !== 'synthesized_tool_result');
  const olderSynthetic = input.repairs.filter(
    (r) => r.type === 'synthesized_tool_result' && !input.unfinishedCalls.includes(r.callId),
  );
  const repaired = fixes.length + olderSynthetic.length;
  if (repaired > 0) sentences.push(`${plural(repaired, 'repair')} of older history applied (not written to the log).`);
  const damagedLines = input.diagnostics.filter((d) => d.code === 'malformed_line' || d.code === 'invalid_record' || d.code === 'torn_tail').length;
  if (damagedLines > 0) sentences.push(`${plural(damagedLines, 'damaged line')} skipped.`);
  if (input.previousAttempts > 0) {
    sentences.push(`${plural(input.previousAttempts, 'earlier recovery attempt')} did not complete.`);
  }
  return sentences.length > 0 ? sentences.join(' ') : undefined;
}
