/**
 * stream-json output messages in Qwen Code's format (docs/protocol.md), plus mend's
 * recovery and error lines. The CLI builds them and the SDK validates what it reads with the same
 * schemas. Objects are loose so a newer CLI can add fields without breaking an
 * older SDK; the CLI always fills every required field.
 */
import { z } from 'zod';
import { ActiveWriterWireSchema, RecoveryCauseSchema } from './recovery-vocabulary.js';

const envelope = {
  uuid: z.string(),
  session_id: z.string(),
};

export const CapabilitiesSchema = z.looseObject({
  recovery: z.literal(true),
  continue_last_turn: z.boolean(),
  get_recovery_plan: z.boolean(),
  interrupt: z.boolean(),
  can_use_tool: z.boolean(),
});
export type Capabilities = z.infer<typeof CapabilitiesSchema>;

export const SystemInitMessageSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('init'),
  ...envelope,
  cwd: z.string(),
  tools: z.array(z.string()),
  model: z.string().nullable(),
  permission_mode: z.string(),
  mend_version: z.string(),
  resumed: z.boolean(),
  capabilities: CapabilitiesSchema,
  /** Claude Code's fields (docs/compat-claude.md): its name for the mode, where an API key came from, MCP servers, slash commands. */
  permissionMode: z.string().optional(),
  apiKeySource: z.string().optional(),
  mcp_servers: z.array(z.looseObject({ name: z.string(), status: z.string() })).optional(),
  slash_commands: z.array(z.string()).optional(),
});
export type SystemInitMessage = z.infer<typeof SystemInitMessageSchema>;

export const ForeignSourceWireSchema = z.looseObject({
  path: z.string(),
  sha256: z.string(),
  session_id: z.string().nullable(),
  imported: z.boolean(),
  plan_id: z.string().optional(),
});

export const RecoveryActionSchema = z.enum(['none', 'continue', 'awaiting_confirmation', 'refused']);
export type RecoveryAction = z.infer<typeof RecoveryActionSchema>;

/** The plan summary, snake_case; shared by the recovery line, `initialize` and `get_recovery_plan`. */
export const RecoverySummarySchema = z.looseObject({
  plan_id: z.string(),
  kind: z.enum(['clean', 'interrupted_prompt', 'interrupted_turn', 'degraded_history']),
  recovered: z.boolean(),
  cause: RecoveryCauseSchema,
  can_continue: z.boolean(),
  can_auto_continue: z.boolean(),
  requires_user_confirmation: z.boolean(),
  previous_attempts: z.number().int(),
  visible_notice: z.string().nullable(),
  repairs: z.array(z.looseObject({ type: z.string(), count: z.number().int() })),
  repair_details: z.array(z.looseObject({ type: z.string() })),
  continuation: z.looseObject({ mode: z.enum(['retry_user_parts', 'tool_result_parts']), display_text: z.string(), part_count: z.number().int() }).nullable(),
  history: z.looseObject({
    records: z.number().int(),
    api_entries: z.number().int(),
    gaps: z.number().int(),
    malformed_lines: z.number().int(),
    torn_tail: z.boolean(),
    /** Subagent (sidechain) records set aside from the main history. */
    sidechain_records: z.number().int().optional(),
  }),
  /** Another process holds the session right now (cause `running`). */
  active_writer: ActiveWriterWireSchema.nullable().optional(),
  /** The known error a failed run recorded (cause `failed`). */
  last_error: z.looseObject({ code: z.string(), message: z.string() }).nullable().optional(),
  /** Another agent wrote the session (claude, codex, gemini): read in place, or copied into mend (`source.imported`). */
  agent: z.string().optional(),
  agent_version: z.string().nullable().optional(),
  source: ForeignSourceWireSchema.optional(),
});
export type RecoverySummary = z.infer<typeof RecoverySummarySchema>;

export const SystemRecoveryMessageSchema = RecoverySummarySchema.extend({
  type: z.literal('system'),
  subtype: z.literal('recovery'),
  ...envelope,
  action: RecoveryActionSchema,
  reason: z.string().optional(),
  /** The session was recorded in another project directory than the one it now runs in. */
  project_warning: z.string().optional(),
});
export type SystemRecoveryMessage = z.infer<typeof SystemRecoveryMessageSchema>;

/** A problem with the input stream that does not end the process (malformed line, unknown type). */
export const SystemErrorMessageSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('error'),
  ...envelope,
  error: z.looseObject({ code: z.string(), message: z.string(), line: z.number().int().optional() }),
});
export type SystemErrorMessage = z.infer<typeof SystemErrorMessageSchema>;

/** Something the host should know that is not an error: a prompt cut at the record cap, an unknown tool name. */
export const SystemWarningMessageSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('warning'),
  ...envelope,
  warning: z.looseObject({ code: z.string(), message: z.string() }),
});
export type SystemWarningMessage = z.infer<typeof SystemWarningMessageSchema>;

export const ContentBlockSchema = z.union([
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('thinking'), thinking: z.string() }),
  z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
  z.looseObject({
    type: z.literal('tool_result'),
    tool_use_id: z.string(),
    is_error: z.boolean(),
    content: z.string(),
  }),
]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

export const UsageSchema = z.looseObject({ input_tokens: z.number(), output_tokens: z.number() });

export const AssistantMessageSchema = z.looseObject({
  type: z.literal('assistant'),
  ...envelope,
  parent_tool_use_id: z.null(),
  message: z.looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(ContentBlockSchema),
    stop_reason: z.string().nullable(),
    usage: UsageSchema,
  }),
});
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

export const UserMessageSchema = z.looseObject({
  type: z.literal('user'),
  ...envelope,
  parent_tool_use_id: z.null(),
  message: z.looseObject({ role: z.literal('user'), content: z.union([z.string(), z.array(ContentBlockSchema)]) }),
});
export type UserMessage = z.infer<typeof UserMessageSchema>;

export const StreamEventMessageSchema = z.looseObject({
  type: z.literal('stream_event'),
  ...envelope,
  parent_tool_use_id: z.null(),
  event: z.looseObject({ type: z.string() }),
});
export type StreamEventMessage = z.infer<typeof StreamEventMessageSchema>;

/** Claude Code's per-model usage entry (camelCase on its wire). mend knows tokens, not prices: costUSD is 0. */
export const ModelUsageSchema = z.looseObject({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadInputTokens: z.number(),
  cacheCreationInputTokens: z.number(),
  webSearchRequests: z.number(),
  costUSD: z.number(),
  contextWindow: z.number(),
  maxOutputTokens: z.number(),
});

export const ResultSubtypeSchema = z.enum(['success', 'error_during_execution', 'error_max_turns']);

export const ResultMessageSchema = z.looseObject({
  type: z.literal('result'),
  subtype: ResultSubtypeSchema,
  ...envelope,
  is_error: z.boolean(),
  duration_ms: z.number(),
  duration_api_ms: z.number(),
  num_turns: z.number().int(),
  result: z.string().optional(),
  usage: UsageSchema,
  permission_denials: z.array(z.looseObject({ tool_name: z.string(), tool_use_id: z.string() })),
  /** Claude Code's result fields, for hosts on its SDK: why the last response stopped, the cost (0: unknown), usage per model. */
  stop_reason: z.string().nullable().optional(),
  total_cost_usd: z.number().optional(),
  modelUsage: z.record(z.string(), ModelUsageSchema).optional(),
  /** Error results: the messages as a list (Claude's SDK reads `errors`), beside mend's `error`. */
  errors: z.array(z.string()).optional(),
  error: z
    .looseObject({
      code: z.string(),
      message: z.string(),
      /** session_locked: who holds the session. */
      holder: z.looseObject({ host: z.string().optional(), pid: z.number().int().nullable().optional(), since: z.string().optional() }).optional(),
      session_id: z.string().optional(),
    })
    .optional(),
  /** json output mode only: the recovery summary of a resumed session. */
  recovery: RecoverySummarySchema.optional(),
});
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

export const OutputMessageSchema = z.union([
  SystemInitMessageSchema,
  SystemRecoveryMessageSchema,
  SystemErrorMessageSchema,
  SystemWarningMessageSchema,
  AssistantMessageSchema,
  UserMessageSchema,
  StreamEventMessageSchema,
  ResultMessageSchema,
]);
export type OutputMessage = z.infer<typeof OutputMessageSchema>;
