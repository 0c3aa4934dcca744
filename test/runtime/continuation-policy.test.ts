/** The one policy, table-driven over real plans of corpus cases. */
import { describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../src/recovery/build-plan.js';
import { decideRecoveryAction } from '../../src/runtime/continuation-policy.js';
import { loadSession } from '../../src/session/session-loader.js';
import { CORPUS_DIR } from '../support/corpus.js';

const planOf = async (name: string, allowAutoContinue = false) =>
  buildPlanForSession(await loadSession(`${CORPUS_DIR}/${name}/session.jsonl`), { allowAutoContinue });

describe('decideRecoveryAction', () => {
  it('continue: accepted on an interrupted turn, refused with a code otherwise', async () => {
    const dangling = await planOf('dangling-single-call');
    expect(decideRecoveryAction(dangling, { type: 'continue' })).toEqual({ action: 'continue', execute: 'continuation' });
    expect(decideRecoveryAction(dangling, { type: 'continue', planId: 'rp_x' })).toMatchObject({ action: 'refused', code: 'stale_plan' });
    expect(decideRecoveryAction(dangling, { type: 'continue' }, { busy: true })).toMatchObject({ action: 'refused', code: 'turn_running' });
    expect(decideRecoveryAction(await planOf('history-gap-middle'), { type: 'continue' })).toMatchObject({ action: 'refused', code: 'continuation_refused' });
    expect(decideRecoveryAction(await planOf('clean-model-text-tail'), { type: 'continue' })).toMatchObject({
      action: 'nothing_to_do',
      code: 'nothing_to_continue',
    });
    expect(decideRecoveryAction(null, { type: 'continue' })).toMatchObject({ action: 'nothing_to_do', code: 'nothing_to_continue' });
  });

  it('auto-continue only with the opt-in, never after an abort or an earlier attempt, never a degraded history', async () => {
    expect(decideRecoveryAction(await planOf('dangling-single-call'), { type: 'auto_continue' }).action).toBe('awaiting_confirmation');
    expect(decideRecoveryAction(await planOf('dangling-single-call', true), { type: 'auto_continue' }).action).toBe('continue');
    expect(decideRecoveryAction(await planOf('aborted-dangling-call', true), { type: 'auto_continue' }).action).toBe('awaiting_confirmation');
    expect(decideRecoveryAction(await planOf('second-recovery-attempt', true), { type: 'auto_continue' }).action).toBe('awaiting_confirmation');
    expect(decideRecoveryAction(await planOf('history-gap-middle', true), { type: 'auto_continue' })).toMatchObject({ code: 'continuation_refused' });
  });

  it('a prompt on a degraded history needs accept-degraded; a prompt on an interrupted one closes it first', async () => {
    const degraded = await planOf('history-gap-middle');
    expect(decideRecoveryAction(degraded, { type: 'prompt', acceptDegraded: false })).toMatchObject({ action: 'refused', code: 'degraded_history' });
    expect(decideRecoveryAction(degraded, { type: 'prompt', acceptDegraded: true })).toEqual({ action: 'none', execute: 'prompt' });
    expect(decideRecoveryAction(await planOf('dangling-single-call'), { type: 'prompt', acceptDegraded: false })).toEqual({
      action: 'continue',
      execute: 'prompt',
    });
  });
});
