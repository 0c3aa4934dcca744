/**
 * stream-json input in Qwen Code's format (docs/protocol.md): user messages and the control
 * protocol, in both directions. The CLI parses inbound lines with these schemas
 * (tolerantly: a bad line is reported and skipped) and the SDK builds its
 * outbound lines with the same ones.
 */
import { z } from 'zod';
import { APPROVAL_MODES, REFUSED_APPROVAL_MODES, approvalModeFromAlias } from './approval-modes.js';
import { ContinueRefusalCodeSchema } from './error-codes.js';
import { ContentBlockSchema, RecoverySummarySchema } from './messages.js';

// ---- host -> CLI -----------------------------------------------------------------------

export const InputUserMessageSchema = z.looseObject({
  type: z.literal('user'),
  session_id: z.string().optional(),
  message: z.looseObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(z.union([ContentBlockSchema, z.looseObject({ type: z.string() })]))]),
  }),
  parent_tool_use_id: z.string().nullable().optional(),
});
export type InputUserMessage = z.infer<typeof InputUserMessageSchema>;

/**
 * `initialize`. Fields Claude's SDK sends that mend honours: `systemPrompt` (a string or the
 * parts of one; `[""]` means the host set none), `appendSystemPrompt`, `disallowedTools`,
 * `mcpServers` (`{name: entry}`, src/tools/mcp/mcp-config.ts) and `sdkMcpServers` (the host's
 * in-process servers: Claude's SDK sends their names, Qwen's `{name: {type: "sdk", name}}`).
 * Everything else is accepted and ignored.
 */
export const InitializeRequestSchema = z.looseObject({
  subtype: z.literal('initialize'),
  // A shape mend does not know is ignored rather than failing the initialize that switches on approvals.
  systemPrompt: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .catch(undefined),
  appendSystemPrompt: z.string().optional().catch(undefined),
  disallowedTools: z.array(z.string()).optional(),
  mcpServers: z.record(z.string(), z.unknown()).optional().catch(undefined),
  sdkMcpServers: z
    .union([z.array(z.string()), z.record(z.string(), z.unknown())])
    .optional()
    .catch(undefined),
});

/**
 * One JSON-RPC message for a host's in-process MCP server, either way: mend sends the
 * server's client messages (the answer's `mcp_response` carries the server's reply), the
 * host sends what the server says on its own (a `tools/list_changed` notification).
 */
export const McpMessageRequestSchema = z.looseObject({
  subtype: z.literal('mcp_message'),
  server_name: z.string().min(1),
  message: z.looseObject({ jsonrpc: z.literal('2.0') }),
});
export const InterruptRequestSchema = z.looseObject({ subtype: z.literal('interrupt') });
export const SetPermissionModeRequestSchema = z.looseObject({
  subtype: z.literal('set_permission_mode'),
  /** mend's mode or another host's name for it (approval-modes.ts); the answer echoes the caller's word. */
  mode: z.string().superRefine((name, ctx) => {
    if (approvalModeFromAlias(name) !== undefined) return;
    const why = Object.hasOwn(REFUSED_APPROVAL_MODES, name)
      ? REFUSED_APPROVAL_MODES[name]
      : `use ${APPROVAL_MODES.join(', ')} or Claude's acceptEdits, bypassPermissions, dontAsk`;
    ctx.addIssue({ code: 'custom', message: `permission mode ${JSON.stringify(name)} is not one mend has: ${why}` });
  }),
});
export const SetModelRequestSchema = z.looseObject({ subtype: z.literal('set_model'), model: z.string().min(1) });
export const ContinueLastTurnRequestSchema = z.looseObject({
  subtype: z.literal('continue_last_turn'),
  plan_id: z.string().optional(),
});
export const GetRecoveryPlanRequestSchema = z.looseObject({ subtype: z.literal('get_recovery_plan') });

export const HostControlRequestSchema = z.discriminatedUnion('subtype', [
  InitializeRequestSchema,
  InterruptRequestSchema,
  SetPermissionModeRequestSchema,
  SetModelRequestSchema,
  ContinueLastTurnRequestSchema,
  GetRecoveryPlanRequestSchema,
  McpMessageRequestSchema,
]);
export type HostControlRequest = z.infer<typeof HostControlRequestSchema>;
/** The subtypes a host may send, derived from the schema so the list cannot drift from it. */
export const HOST_CONTROL_SUBTYPES = HostControlRequestSchema.options.map((o) => o.shape.subtype.value);
export type HostControlSubtype = HostControlRequest['subtype'];

/** The envelope only; the `request` is parsed separately so an unknown subtype can still be answered by id. */
export const ControlRequestEnvelopeSchema = z.looseObject({
  type: z.literal('control_request'),
  request_id: z.string().min(1),
  request: z.looseObject({ subtype: z.string() }),
});

export const ControlCancelRequestSchema = z.looseObject({
  type: z.literal('control_cancel_request'),
  request_id: z.string().min(1),
});

// ---- CLI -> host -----------------------------------------------------------------------

export const CanUseToolRequestSchema = z.looseObject({
  subtype: z.literal('can_use_tool'),
  tool_name: z.string(),
  tool_use_id: z.string(),
  input: z.record(z.string(), z.unknown()),
});

export const CliControlRequestSchema = z.looseObject({
  type: z.literal('control_request'),
  request_id: z.string(),
  request: z.discriminatedUnion('subtype', [CanUseToolRequestSchema, McpMessageRequestSchema]),
});
export type CliControlRequest = z.infer<typeof CliControlRequestSchema>;

export const PermissionResultSchema = z.union([
  z.looseObject({ behavior: z.literal('allow'), updatedInput: z.record(z.string(), z.unknown()).optional() }),
  z.looseObject({ behavior: z.literal('deny'), message: z.string().optional() }),
]);
export type PermissionResult = z.infer<typeof PermissionResultSchema>;

// ---- responses, both directions --------------------------------------------------------

export const ControlSuccessSchema = z.looseObject({
  subtype: z.literal('success'),
  request_id: z.string(),
  response: z.record(z.string(), z.unknown()).optional(),
});
export const ControlErrorSchema = z.looseObject({
  subtype: z.literal('error'),
  request_id: z.string(),
  error: z.string(),
  /** mend adds a stable code to every error answer. */
  code: z.string().optional(),
  /** The same code under the name Claude's SDK reads. */
  error_code: z.string().optional(),
});
export const ControlResponseMessageSchema = z.looseObject({
  type: z.literal('control_response'),
  response: z.discriminatedUnion('subtype', [ControlSuccessSchema, ControlErrorSchema]),
});
export type ControlResponseMessage = z.infer<typeof ControlResponseMessageSchema>;

/** Answer to `continue_last_turn`. */
export const ContinueLastTurnAnswerSchema = z.looseObject({
  accepted: z.boolean(),
  interruption: z.enum(['none', 'interrupted_prompt', 'interrupted_turn']),
  plan_id: z.string(),
  kind: z.enum(['clean', 'interrupted_prompt', 'interrupted_turn', 'degraded_history']),
  /** Refusals: a stable code from the one refusal union, and the human text. */
  code: ContinueRefusalCodeSchema.optional(),
  reason: z.string().optional(),
});
export type ContinueLastTurnAnswer = z.infer<typeof ContinueLastTurnAnswerSchema>;

/** Answer to `initialize`: capabilities as in `init`, plus the recovery summary when resumed. */
export const InitializeAnswerSchema = z.looseObject({
  capabilities: z.record(z.string(), z.unknown()),
  session_id: z.string(),
  recovery: RecoverySummarySchema.nullable(),
  /** What Claude's SDK reads (supportedCommands, supportedModels, supportedAgents, accountInfo). */
  commands: z.array(z.looseObject({ name: z.string(), description: z.string(), argumentHint: z.string() })).optional(),
  models: z.array(z.looseObject({ value: z.string(), displayName: z.string(), description: z.string() })).optional(),
  agents: z.array(z.looseObject({ name: z.string(), description: z.string() })).optional(),
  account: z.looseObject({}).optional(),
  output_style: z.string().optional(),
  available_output_styles: z.array(z.string()).optional(),
  /** Present when the request carried mcpServers or sdkMcpServers: true, they are started (their status is on `system/init`). */
  mcp_servers_applied: z.boolean().optional(),
  /** Present when the request carried disallowedTools: they are enforced. */
  disallowed_tools_applied: z.boolean().optional(),
});

export const InboundLineSchema = z.union([InputUserMessageSchema, ControlRequestEnvelopeSchema, ControlCancelRequestSchema, ControlResponseMessageSchema]);

/** Control lines the CLI writes to stdout besides the messages of messages.ts. */
export const CliOutboundControlSchema = z.union([ControlResponseMessageSchema, CliControlRequestSchema, ControlCancelRequestSchema]);
export type CliOutboundControl = z.infer<typeof CliOutboundControlSchema>;
