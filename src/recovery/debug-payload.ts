/** What a recovery leaves for diagnostics and bug reports; the caller passes the timestamp in (recovery reads no clock). */
import type { RecoveryDebugPayload } from '../session/records.js';
import type { SessionRecoveryPlan } from './plan-types.js';

export function toRecoveryDebugPayload(plan: SessionRecoveryPlan, timestamp: string): RecoveryDebugPayload {
  return { planId: plan.planId, kind: plan.kind, repairs: structuredClone(plan.repairs), timestamp };
}
