/**
 * The INFO item a resume shows for a plan that is not clean (design 4.1 step 5):
 * what happened (the plan's own visible notice), the repairs with counts, what
 * `/continue` would send, and what the person can do. Whether continuing is
 * allowed is the runtime's answer (`runtime.decide`, the one policy), never decided here.
 */
import type { ActiveWriter } from '../../session/active-writer.js';
import type { RecoveryPlanHead } from '../../recovery/plan-types.js';
import type { Decision } from '../../runtime/continuation-policy.js';
import { countRepairs } from '../shared/recovery-summary.js';
import type { UiItem } from './ui-items.js';

export interface NoticeContext {
  /** The holder when another process writes the session (opened read-only). */
  activeWriter: ActiveWriter | null;
  /** --accept-degraded was given: a new prompt needs no further confirmation. */
  acceptDegraded: boolean;
  /** The runtime's answer to a continue of this plan. */
  decision: Decision;
}

/** The INFO item, or null for a clean plan (a clean plan gets no INFO item, whatever else it carries). */
export function recoveryNotice(plan: RecoveryPlanHead, context: NoticeContext, newId: () => string): Extract<UiItem, { type: 'info' }> | null {
  if (plan.kind === 'clean') return null;
  const lines: string[] = [];
  if (plan.visibleNotice) lines.push(plan.visibleNotice);
  const repairs = countRepairs(plan.repairs);
  lines.push(repairs.length > 0 ? `Repairs (not written to the log): ${repairs.map((r) => `${r.type} ×${r.count}`).join(', ')}` : 'Repairs: none');

  const actions: string[] = [];
  const { decision } = context;
  if (context.activeWriter) {
    lines.push(`Read-only: another process holds this session (${holderText(context.activeWriter)}); it cannot be continued here.`);
    actions.push('/resume another session', '/clear for a new session');
  } else if (decision.action === 'continue' && plan.continuation) {
    const parts = plan.continuation.parts.length;
    lines.push(`/continue would send ${parts} part${parts === 1 ? '' : 's'} (${plan.continuation.mode}): ${plan.continuation.displayText}`);
    if (plan.requiresUserConfirmation) lines.push(`Needs your confirmation: ${confirmationReason(plan)}; typing /continue is that confirmation.`);
    actions.push(
      `/continue  continue the interrupted turn (plan ${plan.planId}, checked again before it runs)`,
      'or type a new prompt  the tail is closed as the plan says, then your prompt is sent',
    );
  } else if (decision.action === 'refused' || decision.action === 'nothing_to_do') {
    lines.push(`Continuing is refused [${decision.code}]: ${decision.message}`);
    if (plan.kind === 'degraded_history') {
      actions.push(
        context.acceptDegraded
          ? 'type a new prompt  it runs on the history after the damage (--accept-degraded was given)'
          : 'type a new prompt  you will be asked to confirm running it on the history after the damage (as --accept-degraded)',
        '/plan  show the damage in full',
      );
    } else {
      actions.push('type a new prompt');
    }
  }
  const cause = plan.cause === 'none' ? '' : ` · cause ${plan.cause}`;
  return { id: newId(), type: 'info', kind: plan.kind, title: `${plan.kind}${cause} · plan ${plan.planId}`, lines, actions };
}

/** The read-only panel for any session another live process writes (clean ones too). */
export function readOnlyPanel(holder: ActiveWriter, newId: () => string): Extract<UiItem, { type: 'panel' }> {
  return {
    id: newId(),
    type: 'panel',
    label: 'READ-ONLY',
    tone: 'warning',
    title: `in use by ${holderText(holder)}`,
    lines: [
      'This session is running in another process: its history is shown, nothing can be sent from here.',
      '/resume another session, or /clear to start a new one.',
    ],
  };
}

export function holderText(holder: ActiveWriter): string {
  return `${holder.host} pid ${holder.pid}, since ${holder.since}`;
}

function confirmationReason(plan: RecoveryPlanHead): string {
  if (plan.previousAttempts > 0) return `an earlier recovery attempt did not complete (${plan.previousAttempts})`;
  if (plan.cause === 'aborted') return 'the turn was aborted by the user';
  return 'an interrupted turn is never continued automatically';
}
