/**
 * The on-disk ChatRecord line format: Qwen Code's session log format, so a log
 * either of us wrote loads in the other. One schema serves the writer, the
 * reader and anything else that handles records.
 *
 * Objects are "loose": unknown fields survive a read/merge so that a Qwen Code
 * session loads unchanged and nothing we do not understand is dropped.
 */
import { z } from 'zod';

export const FunctionCallSchema = z.looseObject({
  id: z.string().optional(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()).optional(),
});
export type FunctionCall = z.infer<typeof FunctionCallSchema>;

export const FunctionResponseSchema = z.looseObject({
  id: z.string().optional(),
  name: z.string(),
  response: z.record(z.string(), z.unknown()),
});
export type FunctionResponse = z.infer<typeof FunctionResponseSchema>;

export const PartSchema = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  functionCall: FunctionCallSchema.optional(),
  functionResponse: FunctionResponseSchema.optional(),
});
export type Part = z.infer<typeof PartSchema>;

export const RoleSchema = z.enum(['user', 'model']);
export type Role = z.infer<typeof RoleSchema>;

export const ContentSchema = z.looseObject({
  role: RoleSchema,
  parts: z.array(PartSchema),
});
export type Content = z.infer<typeof ContentSchema>;

export const RecordTypeSchema = z.enum(['user', 'assistant', 'tool_result', 'system']);
export type RecordType = z.infer<typeof RecordTypeSchema>;

export const ProvenanceSchema = z.enum(['real_user', 'assistant_output', 'tool_result', 'system']);

/** Base fields, in the order Qwen Code writes them. */
const baseShape = {
  uuid: z.string().min(1),
  parentUuid: z.string().min(1).nullable(),
  sessionId: z.string().min(1),
  timestamp: z.string(),
  // Older Qwen logs omit some of these; reading tolerates that, our writer always sets them.
  provenance: z.string().optional(),
  cwd: z.string().optional(),
  version: z.string().optional(),
  gitBranch: z.string().optional(),
  subtype: z.string().optional(),
};

export const UserRecordSchema = z.looseObject({
  ...baseShape,
  type: z.literal('user'),
  message: z.looseObject({ role: z.literal('user'), parts: z.array(PartSchema) }),
  systemPayload: z.looseObject({ displayText: z.string().optional() }).optional(),
});
export type UserRecord = z.infer<typeof UserRecordSchema>;

export const AssistantRecordSchema = z.looseObject({
  ...baseShape,
  type: z.literal('assistant'),
  model: z.string().optional(),
  message: z.looseObject({ role: z.literal('model'), parts: z.array(PartSchema) }),
  usageMetadata: z.record(z.string(), z.unknown()).optional(),
});
export type AssistantRecord = z.infer<typeof AssistantRecordSchema>;

/** Marks a tool_result that mend synthesized to close an interrupted turn. */
export const SyntheticMarkerSchema = z.looseObject({
  planId: z.string(),
  synthetic: z.literal(true),
});
export type SyntheticMarker = z.infer<typeof SyntheticMarkerSchema>;

export const ToolCallResultSchema = z.looseObject({
  callId: z.string(),
  status: z.string(),
  resultDisplay: z.unknown().optional(),
  error: z.unknown().optional(),
  errorType: z.string().optional(),
});

export const ToolResultRecordSchema = z.looseObject({
  ...baseShape,
  type: z.literal('tool_result'),
  message: z.looseObject({ role: z.literal('user'), parts: z.array(PartSchema) }),
  toolCallResult: ToolCallResultSchema.optional(),
  recovery: SyntheticMarkerSchema.optional(),
});
export type ToolResultRecord = z.infer<typeof ToolResultRecordSchema>;

export const SystemRecordSchema = z.looseObject({
  ...baseShape,
  type: z.literal('system'),
  subtype: z.string(),
  systemPayload: z.unknown().optional(),
});
export type SystemRecord = z.infer<typeof SystemRecordSchema>;

export const ChatRecordSchema = z.discriminatedUnion('type', [UserRecordSchema, AssistantRecordSchema, ToolResultRecordSchema, SystemRecordSchema]);
export type ChatRecord = z.infer<typeof ChatRecordSchema>;

// ---- system payloads that mend interprets -------------------------------------------------

export const ChatCompressionPayloadSchema = z.looseObject({
  info: z.unknown().optional(),
  compressedHistory: z.array(ContentSchema),
  completedToolCallIds: z.array(z.string()).optional(),
});
export type ChatCompressionPayload = z.infer<typeof ChatCompressionPayloadSchema>;

/** sighup: the terminal went away; stdout_closed: the reader of stdout went away (`| head -1`). */
export const TurnAbortReasonSchema = z.enum(['sigint', 'sigterm', 'interrupt', 'sighup', 'stdout_closed']);

/** The reason of an abort signal as a recorded abort reason (anything unknown reads as sigint). */
export function turnAbortReasonOf(reason: unknown): TurnAbortReason {
  const parsed = TurnAbortReasonSchema.safeParse(reason);
  return parsed.success ? parsed.data : 'sigint';
}
export type TurnAbortReason = z.infer<typeof TurnAbortReasonSchema>;

export const TurnAbortedPayloadSchema = z.looseObject({ reason: TurnAbortReasonSchema });
export type TurnAbortedPayload = z.infer<typeof TurnAbortedPayloadSchema>;

export const RecoveryKindSchema = z.enum(['clean', 'interrupted_prompt', 'interrupted_turn', 'degraded_history']);
export type SessionRecoveryKind = z.infer<typeof RecoveryKindSchema>;

export const RecoveryRepairSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('synthesized_tool_result'), callId: z.string(), name: z.string() }),
  z.object({ type: z.literal('dropped_duplicate_tool_result'), callId: z.string(), name: z.string() }),
  z.object({ type: z.literal('hoisted_tool_result'), callId: z.string(), name: z.string() }),
  z.object({ type: z.literal('dropped_orphan_tool_result'), callId: z.string(), name: z.string() }),
  z.object({ type: z.literal('dropped_call_without_id'), name: z.string() }),
  z.object({ type: z.literal('dropped_duplicate_call'), callId: z.string(), name: z.string() }),
  z.object({ type: z.literal('dropped_misplaced_call'), callId: z.string(), name: z.string() }),
  // A result recorded under another function name than its call's: sent under the call's name.
  z.object({ type: z.literal('renamed_tool_result'), callId: z.string(), name: z.string(), recordedName: z.string() }),
  z.object({ type: z.literal('history_gap'), childUuid: z.string(), missingParentUuid: z.string() }),
]);
export type RecoveryRepair = z.infer<typeof RecoveryRepairSchema>;

/** What a recovery leaves for diagnostics and bug reports (never part of the model's history); the payload of a `recovery` system record. */
export const RecoveryDebugPayloadSchema = z.looseObject({
  planId: z.string(),
  kind: RecoveryKindSchema,
  repairs: z.array(RecoveryRepairSchema),
  timestamp: z.string(),
});
export type RecoveryDebugPayload = z.infer<typeof RecoveryDebugPayloadSchema>;

/**
 * What counting a `recovery` record needs: a newer mend may write repair types (or
 * kinds) this one does not know, and such an attempt must still count, so only the
 * shape is checked here, not the enums.
 */
export const RecoveryMarkerPayloadSchema = z.looseObject({
  planId: z.string(),
  kind: z.string(),
  repairs: z.array(z.looseObject({ type: z.string() })),
});

/** A run that ended with a known error (provider error, cut stream, max turns): not a crash. */
export const TurnFailedPayloadSchema = z.looseObject({ code: z.string(), message: z.string() });
export type TurnFailedPayload = z.infer<typeof TurnFailedPayloadSchema>;

export const ParentSessionPayloadSchema = z.looseObject({
  sourceSessionId: z.string(),
  sourceLeafUuid: z.string().nullable(),
});

export { MEND_VERSION_PREFIX, SystemSubtype, isMendVersion } from './record-kinds.js';
