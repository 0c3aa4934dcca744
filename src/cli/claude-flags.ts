/**
 * The flags `@anthropic-ai/claude-agent-sdk` (0.3.333) can put on a command line that mend
 * does not implement as options of its own: accepted and ignored (noted with --debug) when
 * ignoring them changes nothing a host relies on, refused with a readable usage error when
 * ignoring them would silently break what the host asked for. The full table, with the flags
 * mend implements, is docs/compat-claude.md.
 */

/** Value flags ignored: model tuning mend's providers do not have, Claude Code's own config and plugins. */
export const CLAUDE_IGNORED_FLAGS = [
  'thinking',
  'thinking-display',
  'max-thinking-tokens',
  'effort',
  'task-budget',
  'betas',
  // Cost is unknown to mend (total_cost_usd is 0), so a budget can never be exceeded.
  'max-budget-usd',
  'setting-sources',
  'settings',
  'managed-settings',
  'permission-prompts',
  'channels',
  'project-config-root',
  'plugin-dir',
  'plugin-dir-no-mcp',
  'initialize-fields',
] as const;

/** Boolean flags ignored. */
export const CLAUDE_BOOLEAN_FLAGS = [
  // mend reads `initialize` whenever it comes; there is nothing to wait for.
  'await-initialize',
  // Claude Code wants it before bypassPermissions; mend's yolo needs no second flag.
  'allow-dangerously-skip-permissions',
  'strict-mcp-config',
  'include-hook-events',
  'session-mirror',
  'managed-settings-in-initialize',
] as const;

/** Flags refused: the host asked for something mend would otherwise quietly not do. */
export const CLAUDE_REFUSED_REASONS = {
  'json-schema': 'structured output (outputFormat) is not implemented; the result would carry no structured_output',
  agent: 'named agents are not implemented; the prompt would run without the agent\'s instructions and tools',
  'mcp-config': 'mend has no MCP client; the servers\' tools would not exist (pass mcpServers in initialize to be told so without failing)',
  'resume-session-at': 'mend resumes a whole session; it cannot cut its history at a message',
  'resume-drops-turn': 'mend resumes a whole session; use its recovery plan (--continue-interrupted) for an unfinished turn',
} as const;

/**
 * `--no-session-persistence` (yargs reads it as session-persistence=false) is implemented: the
 * session is written to a private temporary home deleted at exit, so it has nothing to resume.
 */
export const NO_PERSISTENCE_REASON = 'the session is kept in a temporary store deleted when mend exits, so there is nothing to resume and no store to name';
export const CLAUDE_REFUSED_FLAGS = Object.keys(CLAUDE_REFUSED_REASONS) as Array<keyof typeof CLAUDE_REFUSED_REASONS>;
