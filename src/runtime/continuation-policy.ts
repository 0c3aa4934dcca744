/**
 * The one continuation policy: what a front end may do about a session's
 * recovery plan (continue, auto-continue, a prompt on a degraded history),
 * decided the same way for the headless CLI, the control protocol, ACP, the
 * daemon and the terminal UI. Pure: the plan and the runtime's state are inputs.
 */
import type { RecoveryPlanHead } from '../recovery/plan-types.js';
import type { RefusalCode } from '../wire/error-codes.js';

export type RunIntent =
  | { type: 'inspect' }
  /**
   * `unconfirmed`: the caller names no plan and may not have seen it (the daemon's
   * `/continue` without a body, as Qwen's client sends it). Such a continue never
   * repeats a tail that already failed a recovery attempt: that needs the plan id.
   */
  | { type: 'continue'; planId?: string | undefined; unconfirmed?: boolean }
  | { type: 'auto_continue'; planId?: string | undefined }
  | { type: 'prompt'; acceptDegraded: boolean }
  /** A host drives the session (stream-json input, ACP, daemon, TUI): it decides later. */
  | { type: 'serve' };

export interface RuntimeState {
  /** A turn is running or queued. */
  busy: boolean;
}

export type Decision =
  | { action: 'continue'; execute: 'continuation' | 'prompt' }
  | { action: 'none'; execute: 'prompt' | 'nothing'; message?: string }
  | { action: 'awaiting_confirmation'; execute: 'nothing' | 'serve'; message: string }
  | { action: 'refused'; execute: 'nothing'; code: RefusalCode; message: string }
  /**
   * A continue with nothing to continue (a clean session, no records): not a refusal of
   * anything the caller may fix; a run that asked for it ends successfully. Its code is
   * what a protocol that answers continue requests says (`nothing_to_continue`).
   */
  | { action: 'nothing_to_do'; execute: 'nothing'; code: 'nothing_to_continue'; message: string }
  | { action: 'none'; execute: 'serve' };

const CONFIRM_HINT = 'run again with --continue-interrupted to continue';

export const REFUSAL_MESSAGES = {
  degradedPrompt: 'the session history is degraded; pass --accept-degraded to run a prompt on the history after the damage',
  degradedContinue: 'a degraded history is never continued; inspect it with `mend plan`, or fork it and send a new prompt with --accept-degraded',
  clean: 'nothing to continue: the session is clean',
  noRecords: 'nothing to continue: the session has no records',
  busy: 'a turn is running; wait for its result',
  failedAttempt: (attempts: number, planId: string) =>
    `an earlier recovery attempt of this tail did not complete (${attempts}); continue again naming plan ${planId} to confirm`,
} as const;

export function decideRecoveryAction(plan: RecoveryPlanHead | null, intent: RunIntent, state: RuntimeState = { busy: false }): Decision {
  if (plan === null) {
    if (intent.type === 'prompt') return { action: 'none', execute: 'prompt' };
    if (intent.type === 'serve') return { action: 'none', execute: 'serve' };
    if (intent.type === 'continue' || intent.type === 'auto_continue') {
      return { action: 'nothing_to_do', execute: 'nothing', code: 'nothing_to_continue', message: REFUSAL_MESSAGES.noRecords };
    }
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
        return { action: 'refused', execute: 'nothing', code: 'degraded_history', message: REFUSAL_MESSAGES.degradedPrompt };
      }
      return plan.canContinue ? { action: 'continue', execute: 'prompt' } : { action: 'none', execute: 'prompt' };

    case 'continue':
    case 'auto_continue': {
      if (state.busy) return { action: 'refused', execute: 'nothing', code: 'turn_running', message: REFUSAL_MESSAGES.busy };
      if (intent.planId !== undefined && intent.planId !== plan.planId) {
        return {
          action: 'refused',
          execute: 'nothing',
          code: 'stale_plan',
          message: `plan ${intent.planId} is stale: the current plan is ${plan.planId}`,
        };
      }
      if (plan.kind === 'degraded_history') {
        return { action: 'refused', execute: 'nothing', code: 'continuation_refused', message: REFUSAL_MESSAGES.degradedContinue };
      }
      if (!plan.canContinue) return { action: 'nothing_to_do', execute: 'nothing', code: 'nothing_to_continue', message: REFUSAL_MESSAGES.clean };
      if (intent.type === 'continue' && intent.unconfirmed === true && plan.previousAttempts > 0) {
        return {
          action: 'refused',
          execute: 'nothing',
          code: 'continuation_refused',
          message: REFUSAL_MESSAGES.failedAttempt(plan.previousAttempts, plan.planId),
        };
      }
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
