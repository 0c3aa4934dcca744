/**
 * Claude Code transcript rows (`~/.claude/projects/<cwd slug>/<uuid>.jsonl`), as
 * zod schemas: inbound tolerant (loose objects, optional fields), so a newer Claude
 * Code's extra fields pass and an unknown row type is counted, not fatal.
 *
 * Rows: `user` and `assistant` (one row per content block; rows of one API message
 * share `message.id`), chained by `uuid`/`parentUuid`, each carrying `sessionId`,
 * `cwd`, `version`, `isSidechain`; plus `system`, `attachment`, `progress` (chained
 * too) and bookkeeping rows without a uuid.
 */
import { z } from 'zod';

export const ClaudeBlockSchema = z.looseObject({ type: z.string() });
export type ClaudeBlock = z.infer<typeof ClaudeBlockSchema>;

export const ClaudeTextBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
export const ClaudeThinkingBlockSchema = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
export const ClaudeToolUseBlockSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()).optional(),
});
export const ClaudeToolResultBlockSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(ClaudeBlockSchema)]).optional(),
  is_error: z.boolean().optional(),
});

const chainShape = {
  uuid: z.string().min(1),
  parentUuid: z.string().min(1).nullable().optional(),
  sessionId: z.string().min(1).optional(),
  timestamp: z.string().optional(),
  cwd: z.string().optional(),
  version: z.string().optional(),
  isSidechain: z.boolean().optional(),
};

export const ClaudeMessageRowSchema = z.looseObject({
  ...chainShape,
  type: z.enum(['user', 'assistant']),
  isMeta: z.boolean().optional(),
  isApiErrorMessage: z.boolean().optional(),
  message: z.looseObject({
    role: z.string().optional(),
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.union([z.string(), z.array(ClaudeBlockSchema)]),
  }),
});
export type ClaudeMessageRow = z.infer<typeof ClaudeMessageRowSchema>;

/** Any other row on the chain (system, attachment, progress, or a type this reader does not know). */
export const ClaudeChainRowSchema = z.looseObject({ ...chainShape, type: z.string() });
export type ClaudeChainRow = z.infer<typeof ClaudeChainRowSchema>;

/** Row types Claude Code 2.x writes; any other is reported as unknown (and still kept on the chain when it has a uuid). */
export const CLAUDE_ROW_TYPES = new Set([
  'user',
  'assistant',
  'system',
  'attachment',
  'progress',
  'summary',
  'file-history-snapshot',
  'queue-operation',
  'last-prompt',
  'custom-title',
  'ai-title',
  'tag',
  'mode',
  'agent-name',
  'agent-color',
  'pr-link',
  'worktree-state',
  'content-replacement',
  // Seen in Claude Code 2.1.333's transcripts (fixtures/foreign-real): bookkeeping, no conversation.
  'atis-latch',
  'api-request',
  'api-request-shape',
  'api-request-blob',
  'tools-used',
]);

/** What Claude Code writes as the user's turn when it resumes an interrupted session (`isMeta: true`). */
export const CLAUDE_CONTINUE_TEXT = 'Continue from where you left off.';
/** The model name of assistant rows Claude Code invents itself ("No response requested.", API errors). */
export const CLAUDE_SYNTHETIC_MODEL = '<synthetic>';
/** User rows Claude Code writes when Esc stops a turn: an abort marker, not the user's words. */
export const CLAUDE_INTERRUPT_TEXTS = new Set(['[Request interrupted by user]', '[Request interrupted by user for tool use]']);
