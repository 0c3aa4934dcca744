/**
 * Codex rollout lines (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`):
 * `{timestamp, ordinal?, type, payload}`; inbound tolerant zod schemas.
 */
import { z } from 'zod';

export const CodexLineSchema = z.looseObject({
  timestamp: z.string().optional(),
  ordinal: z.number().int().optional(),
  type: z.string(),
  payload: z.looseObject({}).optional(),
});
export type CodexLine = z.infer<typeof CodexLineSchema>;

export const CodexSessionMetaSchema = z.looseObject({
  id: z.string().min(1),
  cwd: z.string().optional(),
  cli_version: z.string().optional(),
});

const ContentItemSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

export const CodexMessageSchema = z.looseObject({
  type: z.literal('message'),
  role: z.string(),
  content: z.array(ContentItemSchema),
});
export const CodexReasoningSchema = z.looseObject({
  type: z.literal('reasoning'),
  summary: z.array(ContentItemSchema).optional(),
  content: z.array(ContentItemSchema).nullable().optional(),
});
export const CodexFunctionCallSchema = z.looseObject({
  type: z.literal('function_call'),
  name: z.string().min(1),
  arguments: z.string().optional(),
  call_id: z.string().min(1),
});
export const CodexCustomToolCallSchema = z.looseObject({
  type: z.literal('custom_tool_call'),
  name: z.string().min(1),
  input: z.string().optional(),
  call_id: z.string().min(1),
});
export const CodexLocalShellCallSchema = z.looseObject({
  type: z.literal('local_shell_call'),
  call_id: z.string().min(1),
  action: z.looseObject({ command: z.array(z.string()).optional() }).optional(),
});
/** An output is a string, or (newer) `{content, success}` or a list of content items. */
const OutputSchema = z.union([
  z.string(),
  z.looseObject({ content: z.union([z.string(), z.array(ContentItemSchema)]).optional(), success: z.boolean().optional() }),
  z.array(ContentItemSchema),
]);
export const CodexCallOutputSchema = z.looseObject({
  type: z.enum(['function_call_output', 'custom_tool_call_output']),
  call_id: z.string().min(1),
  output: OutputSchema.optional(),
});
export type CodexOutput = z.infer<typeof OutputSchema>;

/** Line types Codex 0.171 writes (`world_state` seen in fixtures/foreign-real); others are counted as unknown. */
export const CODEX_LINE_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted', 'token_usage_record', 'world_state']);
/** Response items that carry no conversation a continuation needs (kept on the chain as rows). */
export const CODEX_OTHER_ITEMS = new Set(['web_search_call', 'image_generation_call', 'tool_search_call', 'ghost_snapshot', 'compaction', 'other']);

/** User-role messages Codex injects itself: context, not the user's words. */
export const CODEX_INJECTED_PREFIXES = [
  '<environment_context>',
  '<user_instructions>',
  '# AGENTS.md instructions',
  '<user_shell_command>',
  '<permissions',
  '<skill',
];
/** What newer Codex records as a user message when a turn is interrupted. */
export const CODEX_ABORT_PREFIX = '<turn_aborted>';
