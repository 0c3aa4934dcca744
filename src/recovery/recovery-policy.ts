/**
 * Who may continue, and whether a human has to say yes first. Nothing
 * auto-continues without an explicit opt-in, a degraded history never does, and
 * a tail that already failed a recovery attempt or was aborted by the user
 * is never retried automatically.
 */
import type { SessionRecoveryKind } from '../session/records.js';
import type { RecoveryCause } from './plan-types.js';

export interface RecoveryPolicy {
  canContinue: boolean;
  canAutoContinue: boolean;
  requiresUserConfirmation: boolean;
}

export function decidePolicy(input: {
  kind: SessionRecoveryKind;
  cause: RecoveryCause;
  previousAttempts: number;
  allowAutoContinue: boolean;
}): RecoveryPolicy {
  const canContinue = input.kind === 'interrupted_prompt' || input.kind === 'interrupted_turn';
  const blocked = input.previousAttempts > 0 || input.cause === 'aborted';
  const canAutoContinue = canContinue && input.allowAutoContinue && !blocked;
  return { canContinue, canAutoContinue, requiresUserConfirmation: canContinue && !canAutoContinue };
}
