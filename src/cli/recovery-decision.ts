/**
 * What a run does about the recovery plan, decided before the recovery line is
 * printed so the line can say it (`action`). Pure.
 */
import type { SessionRecoveryPlan } from '../recovery/plan-types.js';
import type { RecoveryAction } from '../stream/messages.js';

export type RunIntent =
  | { type: 'inspect' }
  | { type: 'continue'; planId?: string | undefined }
  | { type: 'auto_continue'; planId?: string | undefined }
  | { type: 'prompt'; acceptDegraded: boolean }
  /** stream-json input: the host decides later. */
  | { type: 'serve' };

export type Decision =
  | { action: 'continue'; execute: 'continuation' | 'prompt' }
  | { action: 'none'; execute: 'prompt' | 'nothing'; message?: string }
  | { action: 'awaiting_confirmation'; execute: 'nothing' | 'serve'; message: string }
  | { action: 'refused'; execute: 'nothing'; code: 'stale_plan' | 'continuation_refused' | 'degraded_history'; reason: string }
  | { action: 'none'; execute: 'serve' };

const CONFIRM_HINT = 'run again with --continue-interrupted to continue';

export function decideRecoveryAction(plan: SessionRecoveryPlan | null, intent: RunIntent): Decision {
  if (plan === null) {
    if (intent.type === 'prompt') return { action: 'none', execute: 'prompt' };
    if (intent.type === 'serve') return { action: 'none', execute: 'serve' };
    return { action: 'none', execute: 'nothing' };
  }

  switch (intent.type) {
    case 'serve':
      return plan.canContinue
        ? { action: 'awaiting_confirmation', execute: 'serve', message: 'send continue_last_turn to continue' }
        : { action: 'none', execute: 'serve' };

    case 'inspect':
      return plan.canContinue
        ? { action: 'awaiting_confirmation', execute: 'nothing', message: `${plan.kind}: ${CONFIRM_HINT}` }
        : { action: 'none', execute: 'nothing', message: `${plan.kind}: nothing to continue` };

    case 'prompt':
      if (plan.kind === 'degraded_history' && !intent.acceptDegraded) {
        return {
          action: 'refused',
          execute: 'nothing',
          code: 'degraded_history',
          reason: 'the session history is degraded; pass --accept-degraded to run a prompt on the history after the damage',
        };
      }
      return plan.canContinue ? { action: 'continue', execute: 'prompt' } : { action: 'none', execute: 'prompt' };

    case 'continue':
    case 'auto_continue': {
      if (intent.planId !== undefined && intent.planId !== plan.planId) {
        return {
          action: 'refused',
          execute: 'nothing',
          code: 'stale_plan',
          reason: `plan ${intent.planId} is stale: the current plan is ${plan.planId}`,
        };
      }
      if (plan.kind === 'degraded_history') {
        return {
          action: 'refused',
          execute: 'nothing',
          code: 'continuation_refused',
          reason: 'a degraded history is never continued; inspect it with `mend plan`, or fork it and send a new prompt with --accept-degraded',
        };
      }
      if (!plan.canContinue) return { action: 'none', execute: 'nothing', message: 'nothing to continue: the session is clean' };
      if (intent.type === 'continue' || plan.canAutoContinue) return { action: 'continue', execute: 'continuation' };
      const why =
        plan.previousAttempts > 0
          ? `an earlier recovery attempt did not complete (${plan.previousAttempts})`
          : plan.cause === 'aborted'
            ? 'the turn was aborted by the user'
            : 'this kind needs confirmation';
      return { action: 'awaiting_confirmation', execute: 'nothing', message: `not auto-continuing: ${why}; ${CONFIRM_HINT}` };
    }
  }
}
