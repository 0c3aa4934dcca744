/**
 * mend's extensions to the Agent Client Protocol (`mend --acp`): the `_mend/...`
 * methods, and what mend reads from and puts into `_meta.mend`. Everything else
 * on that wire is ACP's own (the SDK's schemas). Pure zod, so the SDK may use it.
 */
import { z } from 'zod';
import { REFUSAL_CODES, RefusalSchema } from './error-codes.js';
import { RecoverySummaryCamelSchema } from './recovery-summary.js';
import { RecoveryKindWireSchema } from './recovery-vocabulary.js';

export const ACP_MEND_METHODS = {
  /** `{sessionId}` -> the current plan's summary (RecoverySummaryCamel), or null while the session has no records. */
  recovery: '_mend/session/recovery',
  /** `{sessionId, planId?}` -> AcpContinueAnswer, sent when the continuation's turn has ended. */
  continue: '_mend/session/continue',
} as const;

/** The commands offered to editors without extension support (`available_commands_update`). */
export const ACP_COMMANDS = {
  continue: 'continue',
  plan: 'plan',
} as const;

export const AcpRecoveryParamsSchema = z.object({ sessionId: z.string().min(1) });
export type AcpRecoveryParams = z.infer<typeof AcpRecoveryParamsSchema>;

export const AcpContinueParamsSchema = z.object({
  sessionId: z.string().min(1),
  /** Refused with `stale_plan` unless the plan rebuilt under the lease still has this id. */
  planId: z.string().min(1).optional(),
});
export type AcpContinueParams = z.infer<typeof AcpContinueParamsSchema>;

export const AcpStopReasonSchema = z.enum(['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled']);

/** The answer of `_mend/session/continue` (and `_meta.mend.continue` of a `/continue` prompt). */
export const AcpContinueAnswerSchema = z.union([
  z.object({
    accepted: z.literal(true),
    planId: z.string(),
    kind: RecoveryKindWireSchema,
    stopReason: AcpStopReasonSchema,
    /** Present when the continued turn failed (a provider error, for example). */
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  }),
  RefusalSchema,
]);
export type AcpContinueAnswer = z.infer<typeof AcpContinueAnswerSchema>;

/** `_meta.mend` a client may send on `session/load` and `session/resume`. */
export const AcpOpenMetaSchema = z.looseObject({
  /** Continue the interrupted turn right after the answer, where the policy allows it without confirmation. */
  autoContinue: z.boolean().optional(),
});

/** `_meta.mend` on the `session/load` and `session/resume` answers (and on the recovery `notice`). */
export const AcpSessionMetaSchema = z.looseObject({
  recovery: RecoverySummaryCamelSchema.nullable(),
  /** Only when the client asked for it: whether a continuation starts right after this answer. */
  autoContinue: z.object({ started: z.boolean(), code: z.enum(REFUSAL_CODES).optional(), reason: z.string().optional() }).optional(),
});
export type AcpSessionMeta = z.infer<typeof AcpSessionMetaSchema>;

/** `_meta.mend` on a `session/prompt` answer: the turn's outcome as recorded. */
export const AcpTurnMetaSchema = z.looseObject({
  status: z.enum(['success', 'error', 'max_turns', 'aborted']),
  numTurns: z.number().int(),
  durationMs: z.number(),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
  permissionDenials: z.array(z.object({ toolName: z.string(), toolUseId: z.string(), toolInput: z.record(z.string(), z.unknown()) })),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** On a `/continue` prompt: the same answer `_mend/session/continue` gives. */
  continue: AcpContinueAnswerSchema.optional(),
});
export type AcpTurnMeta = z.infer<typeof AcpTurnMetaSchema>;
