/**
 * `mend serve`'s REST bodies and answers: Qwen Code's daemon shapes (so its
 * `DaemonClient` works unchanged) plus mend's recovery fields. The server
 * validates every request body with these schemas; mend's daemon-backed SDK
 * parses the answers with them. Pure zod, so the SDK may use it.
 *
 * Request schemas are loose: Qwen's client sends fields mend has no use for
 * (`modelServiceId`, `sourceType`, ...); they are accepted and ignored.
 */
import { z } from 'zod';
import { ContinueRefusalCodeSchema } from './error-codes.js';
import { McpServersSchema } from './mcp-server-config.js';
import { PromptBlockSchema } from './prompt-blocks.js';
import { RecoverySummaryCamelSchema } from './recovery-summary.js';
import { RecoveryKindWireSchema } from './recovery-vocabulary.js';

/** Header a client sends back on session calls once a create, load or resume gave it an id (Qwen's name). */
export const CLIENT_ID_HEADER = 'X-Qwen-Client-Id';
/** Sent with `Last-Event-ID` and answered on the SSE response: the journal's epoch (a new one per open). */
export const EVENT_EPOCH_HEADER = 'X-Qwen-Event-Epoch';
export const SSE_STREAM_ID_HEADER = 'X-Qwen-SSE-Stream-Id';

/** The permission options every `permission_request` offers (Qwen's ids, ACP's kinds). */
export const PERMISSION_OPTIONS = [
  { optionId: 'proceed_once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'proceed_always', name: 'Always allow this tool in this session', kind: 'allow_always' },
  { optionId: 'cancel', name: 'Deny', kind: 'reject_once' },
] as const;
export type PermissionOptionId = (typeof PERMISSION_OPTIONS)[number]['optionId'];

/** Approval modes a client may name: mend's, plus the aliases of approval-modes.ts. Checked by the server. */
const ModeName = z.string().min(1).max(64);
/** A session id: a UUID (any case; the server lower-cases it). */
export const SessionIdSchema = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'a session id is a UUID');

// ---- requests ---------------------------------------------------------------------------

export const CreateSessionBodySchema = z.looseObject({
  cwd: z.string().min(1).optional(),
  /** Qwen's client may send null for "none". */
  sessionId: SessionIdSchema.nullish(),
  approvalMode: ModeName.optional(),
  /** MCP servers of this session, `{name: entry}` in the shape of the settings file (mcp-server-config.ts). */
  mcpServers: McpServersSchema.optional(),
});
export type CreateSessionBody = z.infer<typeof CreateSessionBodySchema>;

/** `POST /session/:id/load` and `/resume`. */
export const RestoreSessionBodySchema = z.looseObject({
  cwd: z.string().min(1).optional(),
  approvalMode: ModeName.optional(),
  /** As on create: servers not yet running in the session are started with it. */
  mcpServers: McpServersSchema.optional(),
});
export type RestoreSessionBody = z.infer<typeof RestoreSessionBodySchema>;

/** ACP content blocks (prompt-blocks.ts): the same kinds ACP's session/prompt takes. */
export { PromptBlockSchema };

export const PromptBodySchema = z.looseObject({
  prompt: z.array(PromptBlockSchema),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type PromptBody = z.infer<typeof PromptBodySchema>;

/** `POST /session/:id/continue`: no body (Qwen's client), or the plan the host confirms. */
export const ContinueBodySchema = z.looseObject({ planId: z.string().min(1).optional() });
export type ContinueBody = z.infer<typeof ContinueBodySchema>;

export const PermissionOutcomeSchema = z.union([
  z.looseObject({ outcome: z.literal('selected'), optionId: z.string().min(1) }),
  z.looseObject({ outcome: z.literal('cancelled') }),
]);
export type PermissionOutcome = z.infer<typeof PermissionOutcomeSchema>;

export const PermissionBodySchema = z.looseObject({
  outcome: PermissionOutcomeSchema,
  /** mend's extension: what a `canUseTool` callback can say beyond allow and deny. */
  _meta: z
    .looseObject({
      mend: z.looseObject({ updatedInput: z.record(z.string(), z.unknown()).optional(), message: z.string().optional() }).optional(),
    })
    .optional(),
});
export type PermissionBody = z.infer<typeof PermissionBodySchema>;

/** `/cancel` and `/heartbeat` send `{}`. */
export const EmptyBodySchema = z.looseObject({});

export const ModelBodySchema = z.looseObject({ modelId: z.string().min(1).max(200) });
export const ApprovalModeBodySchema = z.looseObject({ mode: ModeName, planMode: z.unknown().optional(), persist: z.boolean().optional() });

// ---- answers ----------------------------------------------------------------------------

/** Every non-2xx answer: Qwen's client reads `error`; mend adds a stable `code` from the one union. */
export const ErrorBodySchema = z.looseObject({ error: z.string(), code: z.string() });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * The ACP load answer the daemon nests as `state`, with mend's data under
 * `_meta.mend`: the camelCase recovery summary, and the stream-json lines a
 * process-backed run would print first (`init`, then `recovery` when resumed),
 * which the daemon-backed SDK yields as they are.
 */
export const SessionStateSchema = z.looseObject({
  modes: z.looseObject({ currentModeId: z.string(), availableModes: z.array(z.looseObject({ id: z.string(), name: z.string() })) }),
  models: z.looseObject({ currentModelId: z.string().nullable(), availableModels: z.array(z.looseObject({ modelId: z.string() })) }),
  configOptions: z.array(z.unknown()),
  _meta: z.looseObject({
    mend: z.looseObject({
      recovery: RecoverySummaryCamelSchema.nullable(),
      messages: z.array(z.looseObject({ type: z.string() })),
    }),
  }),
});
export type SessionState = z.infer<typeof SessionStateSchema>;

/** One MCP server of a session, as `system/init` lists it: `failed` carries why. */
export const McpServerStatusSchema = z.looseObject({
  name: z.string(),
  status: z.enum(['pending', 'connected', 'failed']),
  error: z.string().optional(),
});

/** `POST /session`, `/load`, `/resume`. */
export const SessionAnswerSchema = z.looseObject({
  sessionId: z.string(),
  workspaceCwd: z.string(),
  attached: z.boolean(),
  clientId: z.string(),
  createdAt: z.string().optional(),
  hasActivePrompt: z.boolean(),
  lastEventId: z.number().int().nonnegative(),
  eventEpoch: z.string(),
  state: SessionStateSchema,
  /** The session's MCP servers and their status (the list `system/init` carries). */
  mcpServers: z.array(McpServerStatusSchema).optional(),
  /** load and resume: the same object as `state._meta.mend.recovery`. */
  recovery: RecoverySummaryCamelSchema.nullable().optional(),
  /** load only: the conversation replayed as `session_update` events. */
  compactedReplay: z.array(z.unknown()).optional(),
  liveJournal: z.array(z.unknown()).optional(),
});
export type SessionAnswer = z.infer<typeof SessionAnswerSchema>;

export const PromptAcceptedSchema = z.looseObject({
  promptId: z.string(),
  lastEventId: z.number().int().nonnegative(),
  eventEpoch: z.string(),
});

const InterruptionSchema = z.enum(['none', 'interrupted_prompt', 'interrupted_turn']);

/** `POST /session/:id/continue`: accepted (the outcome follows on SSE under `promptId`) or the common refusal. */
export const DaemonContinueAnswerSchema = z.union([
  z.looseObject({
    accepted: z.literal(true),
    interruption: InterruptionSchema,
    promptId: z.string(),
    planId: z.string(),
    kind: RecoveryKindWireSchema,
    previousAttempts: z.number().int().nonnegative(),
    lastEventId: z.number().int().nonnegative(),
    eventEpoch: z.string(),
  }),
  z.looseObject({
    accepted: z.literal(false),
    code: ContinueRefusalCodeSchema,
    message: z.string(),
    interruption: InterruptionSchema,
    planId: z.string().nullable(),
    kind: RecoveryKindWireSchema.nullable(),
  }),
]);
export type DaemonContinueAnswer = z.infer<typeof DaemonContinueAnswerSchema>;

/** `GET /session/:id/context`: Qwen's shape; `recovery` is mend's full summary (a superset of Qwen's `{kind, canContinue}`). */
export const ContextAnswerSchema = z.looseObject({
  v: z.literal(1),
  sessionId: z.string(),
  workspaceCwd: z.string(),
  state: SessionStateSchema,
  recovery: RecoverySummaryCamelSchema.nullable(),
  mcpServers: z.array(McpServerStatusSchema).optional(),
});

/** One row of `GET /workspace/:cwd/sessions`. */
export const SessionListingSchema = z.looseObject({
  sessionId: z.string(),
  workspaceCwd: z.string(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
  displayName: z.string().optional(),
  hasActivePrompt: z.boolean(),
  records: z.number().int().nonnegative(),
  /** The kind the session would resume as, its plan id and whether it can continue ('' when unreadable). */
  recoveryKind: z.string(),
  planId: z.string(),
  canContinue: z.boolean(),
  error: z.looseObject({ code: z.string(), message: z.string() }).optional(),
});
export const SessionListAnswerSchema = z.looseObject({ sessions: z.array(SessionListingSchema), nextCursor: z.string().optional() });
export type SessionListAnswer = z.infer<typeof SessionListAnswerSchema>;

export const CapabilitiesSchema = z.looseObject({
  v: z.literal(1),
  mode: z.enum(['http-bridge', 'native']),
  features: z.array(z.string()),
  modelServices: z.array(z.string()),
  transports: z.array(z.string()),
  /** The daemon's first project root: where sessions go when a request names no cwd. */
  workspaceCwd: z.string(),
  limits: z.looseObject({ sessionRestoreTimeoutMs: z.number().int().positive() }),
});
export type Capabilities = z.infer<typeof CapabilitiesSchema>;

/** The daemon's first stdout line. */
export const ReadyLineSchema = z.object({ type: z.literal('ready'), url: z.string(), pid: z.number().int() });
export type ReadyLine = z.infer<typeof ReadyLineSchema>;
