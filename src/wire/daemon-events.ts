/**
 * `mend serve`'s server-sent events: Qwen Code's envelope and event types (its
 * `DaemonClient` keeps a frame only when the JSON in `data:` has `v: 1`, a
 * string `type` and an integer `id` >= 1 if any). mend puts the stream-json
 * messages a process-backed run would print for the same step under
 * `_meta.mend.messages`, so its daemon-backed SDK yields exactly those. Pure zod.
 */
import { z } from 'zod';

export const DAEMON_EVENT_TYPES = [
  'session_update',
  'permission_request',
  'permission_resolved',
  'turn_complete',
  'turn_error',
  'prompt_cancelled',
  'replay_complete',
  'session_closed',
  'state_resync_required',
  'client_evicted',
] as const;
export type DaemonEventType = (typeof DAEMON_EVENT_TYPES)[number];

/** The events that end a turn: exactly one per prompt or accepted continuation, carrying its `promptId`. */
export const TERMINAL_EVENT_TYPES: readonly DaemonEventType[] = ['turn_complete', 'turn_error'];

export const EventMetaSchema = z.looseObject({
  mend: z.looseObject({ messages: z.array(z.looseObject({ type: z.string() })).optional() }).optional(),
});

export const DaemonEventSchema = z.looseObject({
  /** Journal id; absent on frames that are not journaled (replay_complete, snapshots in a load answer). */
  id: z.number().int().positive().optional(),
  v: z.literal(1),
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
  promptId: z.string().optional(),
  originatorClientId: z.string().optional(),
  _meta: EventMetaSchema.optional(),
});
export type DaemonEvent = z.infer<typeof DaemonEventSchema>;

export const SessionUpdateDataSchema = z.looseObject({ sessionId: z.string(), update: z.looseObject({ sessionUpdate: z.string() }) });

export const PermissionRequestDataSchema = z.looseObject({
  requestId: z.string().min(1),
  sessionId: z.string().min(1),
  toolCall: z.looseObject({ toolCallId: z.string() }),
  options: z.array(z.looseObject({ optionId: z.string(), name: z.string(), kind: z.string() })),
});

export const PermissionResolvedDataSchema = z.looseObject({
  requestId: z.string(),
  outcome: z.union([z.looseObject({ outcome: z.literal('selected'), optionId: z.string() }), z.looseObject({ outcome: z.literal('cancelled') })]),
});

export const TurnCompleteDataSchema = z.looseObject({ sessionId: z.string(), stopReason: z.string().min(1), promptId: z.string().optional() });
export const TurnErrorDataSchema = z.looseObject({
  sessionId: z.string(),
  message: z.string(),
  code: z.string().optional(),
  promptId: z.string().optional(),
});
export const SessionClosedDataSchema = z.looseObject({ sessionId: z.string(), reason: z.string(), exitCode: z.number().int().optional() });

/** Why a daemon session ended. */
export const SESSION_CLOSE_REASONS = ['client_close', 'server_shutdown', 'reopened'] as const;
