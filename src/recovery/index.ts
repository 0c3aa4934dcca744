export { buildPlanForSession, buildSessionRecoveryPlan } from './build-plan.js';
export { toRecoveryDebugPayload } from './debug-payload.js';
export { detectTurnInterruption, type TailAnalysis, type TailState } from './detect-interruption.js';
export { PLAN_ID_PATTERN } from './plan-id.js';
export type * from './plan-types.js';
export { decidePolicy, type RecoveryPolicy } from './recovery-policy.js';
export { repairHistory, type RepairResult } from './repair-history.js';
export { SYNTHETIC_RESULT_REASON, syntheticResultPart } from './synthetic-result.js';
export { validateProviderHistory, type HistoryValidation } from './validate-history.js';
