/** The design's RecoveryDebugPayload (section 3.5); the caller passes the timestamp in. */
import type { RecoveryDebugPayload } from '../session/records.js';
import type { SessionRecoveryPlan } from './plan-types.js';

export function toRecoveryDebugPayload(plan: SessionRecoveryPlan, timestamp: string): RecoveryDebugPayload {
  return { planId: plan.planId, kind: plan.kind, repairs: structuredClone(plan.repairs), timestamp };
}
