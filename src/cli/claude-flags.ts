/**
 * The flags `@anthropic-ai/claude-agent-sdk` (0.3.333) can put on a command line that mend
 * does not implement as options of its own: accepted and ignored (noted with --debug) when
 * ignoring them changes nothing a host relies on, refused with a readable usage error when
 * ignoring them would silently break what the host asked for. The full table, with the flags
 * mend implements, is docs/compat-claude.md. Also here: parsing the tool lists and the
 * permission-prompt rule those hosts' command lines need.
 */
import { MendError } from '../errors.js';
import type { StdioRunOptions } from '../frontends/shared/run-options.js';
import { toMendToolRule } from '../wire/tool-aliases.js';

/** The last value of an option given twice (as in args.ts). */
function last<T>(value: T | T[]): T {
  return Array.isArray(value) ? (value.at(-1) as T) : value;
}

function splitList(values: unknown): string[] {
  const list = Array.isArray(values) ? values : values === undefined ? [] : [values];
  return list
    .flatMap((v) => String(v).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

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
  'include-hook-events',
  'session-mirror',
  'managed-settings-in-initialize',
] as const;

/** Flags refused: the host asked for something mend would otherwise quietly not do. */
export const CLAUDE_REFUSED_REASONS = {
  'json-schema': 'structured output (outputFormat) is not implemented; the result would carry no structured_output',
  agent: "named agents are not implemented; the prompt would run without the agent's instructions and tools",
  'resume-session-at': 'mend resumes a whole session; it cannot cut its history at a message',
  'resume-drops-turn': 'mend resumes a whole session; use its recovery plan (--continue-interrupted) for an unfinished turn',
} as const;

/**
 * `--no-session-persistence` (yargs reads it as session-persistence=false) is implemented: the
 * session is written to a private temporary home deleted at exit, so it has nothing to resume.
 */
export const NO_PERSISTENCE_REASON = 'the session is kept in a temporary store deleted when mend exits, so there is nothing to resume and no store to name';
export const CLAUDE_REFUSED_FLAGS = Object.keys(CLAUDE_REFUSED_REASONS) as Array<keyof typeof CLAUDE_REFUSED_REASONS>;

/** Each entry of a tool list in mend's terms (Claude names mapped, shell rules kept); a rule mend cannot apply is a usage error. */
export function toolRules(flag: string, entries: string[]): string[] {
  return entries.map((entry) => {
    const rule = toMendToolRule(entry);
    if (!rule.ok) throw new MendError('usage', `${flag}: ${rule.error}`);
    return rule.rule;
  });
}

/** --core-tools (Qwen) and --tools (Claude; "default" is every tool, an empty value none). */
export function coreToolsOf(a: Record<string, unknown>): string[] | undefined {
  const core = a['core-tools'] === undefined ? undefined : splitList(a['core-tools']);
  const tools = a['tools'] === undefined ? undefined : splitList(a['tools']);
  if (tools !== undefined && tools.length === 1 && tools[0] === 'default') return core === undefined ? undefined : toolRules('--core-tools', core);
  const only = tools !== undefined || core !== undefined ? [...(core ?? []), ...(tools ?? [])] : undefined;
  if (only === undefined) return undefined;
  const rules = toolRules('--tools', only);
  const patterned = rules.find((r) => r.includes('('));
  if (patterned) throw new MendError('usage', `--tools names tools, not rules: ${patterned}`);
  return rules;
}

/**
 * Who answers `can_use_tool`. `--permission-prompt-tool=stdio` (Claude's SDK adds it exactly
 * when its host passes canUseTool) declares it: ask from the first turn. A command line in
 * Claude Code's dialect (`--verbose` with stream-json input, which Claude Code requires and its
 * SDK always sends) without it: never ask, as Claude Code would not. Otherwise mend's own
 * protocol: `initialize` switches asking on (mend's SDK, Qwen's SDK with --channel=SDK, raw hosts).
 */
export function permissionPromptsOf(tool: string | undefined, a: Record<string, unknown>): StdioRunOptions['permissionPrompts'] {
  if (tool !== undefined) {
    if (tool === 'stdio') return 'stdio';
    throw new MendError(
      'usage',
      `--permission-prompt-tool ${JSON.stringify(tool)} is not supported: mend asks permission over the control protocol only (--permission-prompt-tool=stdio, the Claude SDK's canUseTool), not through an MCP tool`,
    );
  }
  const claudeDialect = last(a['verbose']) === true && last(a['input-format']) === 'stream-json' && a['channel'] === undefined;
  return claudeDialect ? 'never' : 'after_initialize';
}
