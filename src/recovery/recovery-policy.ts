/**
 * Who may continue, and whether a human has to say yes first. Nothing
 * auto-continues without an explicit opt-in, a degraded history never does, and
 * a tail that already failed a recovery attempt, was aborted by the user or
 * ended with a known error is never retried automatically. A session another
 * process is still running cannot be continued at all (it is not interrupted).
 */
import type { SessionRecoveryKind } from '../session/records.js';
import type { RecoveryCause } from './plan-types.js';

export interface RecoveryPolicy {
  canContinue: boolean;
  canAutoContinue: boolean;
  requiresUserConfirmation: boolean;
}

export function decidePolicy(input: { kind: SessionRecoveryKind; cause: RecoveryCause; previousAttempts: number; allowAutoContinue: boolean }): RecoveryPolicy {
  const canContinue = (input.kind === 'interrupted_prompt' || input.kind === 'interrupted_turn') && input.cause !== 'running';
  const blocked = input.previousAttempts > 0 || input.cause === 'aborted' || input.cause === 'failed';
  const canAutoContinue = canContinue && input.allowAutoContinue && !blocked;
  return { canContinue, canAutoContinue, requiresUserConfirmation: canContinue && !canAutoContinue };
}
