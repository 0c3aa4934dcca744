/**
 * For hosts written for `@anthropic-ai/claude-agent-sdk` that point its
 * `pathToClaudeCodeExecutable` at mend (docs/compat-claude.md). That SDK passes mend's
 * `system/recovery` line through untyped (its types know only `system/init`), so these
 * helpers give it a type and the two ways to continue an interrupted turn its public
 * surface allows. No dependency on that SDK: its objects are taken structurally.
 */
import { ContinueLastTurnAnswerSchema, type ContinueLastTurnAnswer } from '../wire/control.js';
import { SystemRecoveryMessageSchema, type SystemRecoveryMessage } from '../wire/messages.js';

/** The `system/recovery` line mend prints right after `init` on every resumed session. */
export function isRecoveryMessage(message: unknown): message is SystemRecoveryMessage {
  const m = message as { type?: unknown; subtype?: unknown } | null;
  return m !== null && typeof m === 'object' && m.type === 'system' && m.subtype === 'recovery' && SystemRecoveryMessageSchema.safeParse(message).success;
}

/**
 * The same as a value: Claude's `SDKMessage` union declares `system` as `init` only, so a type
 * guard on one of its messages narrows to `never`; take the line this way instead.
 */
export function recoveryMessageOf(message: unknown): SystemRecoveryMessage | undefined {
  return isRecoveryMessage(message) ? message : undefined;
}

/**
 * `extraArgs` that make the spawned mend execute the recovery continuation at start
 * (`--continue-interrupted [--plan-id ID]`); use with `continue: true` or `resume`.
 * With a plan id mend refuses if the session changed since the host read the plan.
 */
export function continueInterruptedArgs(planId?: string): Record<string, string | null> {
  return planId === undefined ? { 'continue-interrupted': null } : { 'continue-interrupted': null, 'plan-id': planId };
}

/** What this helper needs of Claude's `Query`: its runtime (undeclared) generic request method. */
export interface ClaudeQueryLike {
  request?: (request: Record<string, unknown>, options?: { signal?: AbortSignal }) => Promise<unknown>;
}

/**
 * Sends mend's `continue_last_turn` through the Claude SDK's generic control request path
 * (`Query.request`, present at runtime in 0.3.x though absent from its .d.ts) and returns
 * mend's answer; the continuation then runs as a turn on the same query. Rejects when the
 * SDK has no such method or mend answered with an error.
 */
export async function continueLastTurn(q: unknown, planId?: string): Promise<ContinueLastTurnAnswer> {
  const request = (q as ClaudeQueryLike).request;
  if (typeof request !== 'function') {
    throw new TypeError('this Query has no request() method; spawn with extraArgs: continueInterruptedArgs(planId) instead');
  }
  const answer = (await request.call(q, { subtype: 'continue_last_turn', ...(planId !== undefined ? { plan_id: planId } : {}) })) as { response?: unknown };
  // 0.3.x resolves with the whole {subtype, request_id, response}; take the inner answer either way.
  const body = answer && typeof answer === 'object' && 'response' in answer ? answer.response : answer;
  return ContinueLastTurnAnswerSchema.parse(body);
}
