/**
 * The camelCase recovery summary every protocol after stream-json carries (ACP
 * `_meta.mend.recovery`, the daemon's load/resume/context answers, SDK helpers):
 * the recovery metadata of a load/resume answer (`recovered`, `recoveryKind`, `canContinue`,
 * `requiresUserConfirmation`, repairs counted by type) and more. The stream-json `recovery` line keeps
 * its snake_case twin (messages.ts). Pure zod, so the SDK may use it.
 */
import { z } from 'zod';
import { ActiveWriterWireSchema, RecoveryCauseSchema, RecoveryKindWireSchema } from './recovery-vocabulary.js';

export const RecoverySummaryCamelSchema = z.looseObject({
  planId: z.string(),
  recovered: z.boolean(),
  kind: RecoveryKindWireSchema,
  /** The same value as `kind`, under the name hosts written against that load/resume metadata read. */
  recoveryKind: RecoveryKindWireSchema,
  cause: RecoveryCauseSchema,
  canContinue: z.boolean(),
  canAutoContinue: z.boolean(),
  requiresUserConfirmation: z.boolean(),
  previousAttempts: z.number().int(),
  repairs: z.array(z.looseObject({ type: z.string(), count: z.number().int() })),
  visibleNotice: z.string().nullable(),
  activeWriter: ActiveWriterWireSchema.nullable(),
  /** The known error a failed run recorded (cause `failed`). */
  lastError: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  continuation: z.looseObject({ mode: z.enum(['retry_user_parts', 'tool_result_parts']), displayText: z.string(), partCount: z.number().int() }).nullable(),
  history: z.looseObject({
    records: z.number().int(),
    apiEntries: z.number().int(),
    gaps: z.number().int(),
    malformedLines: z.number().int(),
    tornTail: z.boolean(),
    sidechainRecords: z.number().int(),
  }),
  /** Another agent wrote the session (claude, codex, gemini): read in place, or copied into mend (`source.imported`). */
  agent: z.string().optional(),
  agentVersion: z.string().nullable().optional(),
  source: z
    .looseObject({ path: z.string(), sha256: z.string(), sessionId: z.string().nullable(), imported: z.boolean(), planId: z.string().optional() })
    .optional(),
});
export type RecoverySummaryCamel = z.infer<typeof RecoverySummaryCamelSchema>;
