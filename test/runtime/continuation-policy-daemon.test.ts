/** The one continuation policy: the daemon's unconfirmed continue (no plan id) never repeats a tail that already failed. */
import { describe, expect, it } from 'vitest';
import { buildSessionRecoveryPlan } from '../../src/recovery/index.js';
import { decideRecoveryAction } from '../../src/runtime/continuation-policy.js';
import { call, conversationOf, model, text, user } from '../support/history.js';

function planWith(attempts: number) {
  const conversation = conversationOf([user(text('go')), model(text('running'), call('c1'))], { attempts });
  return buildSessionRecoveryPlan({ sessionId: conversation.sessionId, conversation });
}

describe('decideRecoveryAction: continue intents', () => {
  it('an unconfirmed continue is accepted on a tail that never failed a recovery attempt', () => {
    expect(decideRecoveryAction(planWith(0), { type: 'continue', unconfirmed: true })).toEqual({ action: 'continue', execute: 'continuation' });
  });

  it('after a failed attempt an unconfirmed continue is refused, naming the plan to confirm', () => {
    const plan = planWith(1);
    const decision = decideRecoveryAction(plan, { type: 'continue', unconfirmed: true });
    expect(decision).toMatchObject({ action: 'refused', code: 'continuation_refused' });
    expect(decision.action === 'refused' && decision.message).toContain(plan.planId);
  });

  it('an explicit continue after a failed attempt is allowed: with the plan id, or from a front end that confirms by itself', () => {
    const plan = planWith(2);
    expect(decideRecoveryAction(plan, { type: 'continue', planId: plan.planId })).toEqual({ action: 'continue', execute: 'continuation' });
    expect(decideRecoveryAction(plan, { type: 'continue' })).toEqual({ action: 'continue', execute: 'continuation' });
    expect(decideRecoveryAction(plan, { type: 'continue', planId: 'rp_0000000000000000', unconfirmed: false })).toMatchObject({
      action: 'refused',
      code: 'stale_plan',
    });
  });

  it('auto-continue never repeats a tail that failed', () => {
    const conversation = conversationOf([user(text('go')), model(text('running'), call('c1'))], { attempts: 1 });
    const plan = buildSessionRecoveryPlan({ sessionId: conversation.sessionId, conversation, options: { allowAutoContinue: true } });
    expect(decideRecoveryAction(plan, { type: 'auto_continue' })).toMatchObject({ action: 'awaiting_confirmation' });
  });
});
