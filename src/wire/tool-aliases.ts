/**
 * Tool names: the one table from other hosts' vocabularies to mend's tools, and the
 * rule syntax hosts written for Claude Code use in allowed/disallowed lists
 * (`Bash(git status:*)`). Pure, so the CLI and the SDK share it.
 */

/** Claude Code's built-in tool name -> mend's tool. */
export const CLAUDE_TOOL_ALIASES: Readonly<Record<string, string>> = {
  Read: 'read_file',
  Write: 'write_file',
  Edit: 'edit',
  MultiEdit: 'edit',
  Bash: 'run_shell_command',
  LS: 'list_directory',
  Glob: 'glob',
  Grep: 'grep_search',
};

/** The one mend tool whose calls a rule pattern can match: the shell, on its command. */
export const SHELL_TOOL = 'run_shell_command';

export type ToolRuleResult = { ok: true; rule: string } | { ok: false; error: string };

/**
 * A list entry in mend's terms: a tool name (Claude's mapped), or `run_shell_command(PREFIX:*)` /
 * `run_shell_command(EXACT)` for a shell rule. Patterns on other tools (paths, domains) mean
 * something mend cannot check, so they are refused rather than silently widened or narrowed.
 */
export function toMendToolRule(entry: string): ToolRuleResult {
  const m = /^([A-Za-z_][\w-]*)\((.*)\)$/s.exec(entry.trim());
  const name = m ? m[1]! : entry.trim();
  const mapped = Object.hasOwn(CLAUDE_TOOL_ALIASES, name) ? CLAUDE_TOOL_ALIASES[name]! : name;
  if (!m) return { ok: true, rule: mapped };
  const pattern = m[2]!.trim();
  if (mapped !== SHELL_TOOL) {
    return {
      ok: false,
      error: `the rule ${JSON.stringify(entry)} has a pattern mend cannot apply: only shell rules such as Bash(git status:*) are matched (on the command); name the whole tool instead`,
    };
  }
  if (pattern === '' || pattern === '*' || pattern === ':*') return { ok: true, rule: SHELL_TOOL };
  return { ok: true, rule: `${SHELL_TOOL}(${pattern})` };
}

/** A shell rule's command pattern: `git status:*` matches by prefix (on a word boundary), anything else exactly. */
export function shellRuleMatches(rule: string, command: string): boolean {
  const m = /^run_shell_command\((.*)\)$/s.exec(rule);
  if (!m) return false;
  const pattern = m[1]!;
  const cmd = command.trim();
  if (pattern.endsWith(':*')) {
    const prefix = pattern.slice(0, -2).trim();
    // A prefix never lets a second command ride along: `git status; rm -rf x` is not `git status`.
    if (/[;&|`$<>\n]/.test(cmd)) return false;
    return cmd === prefix || cmd.startsWith(`${prefix} `);
  }
  return cmd === pattern.trim();
}

export function isShellRule(rule: string): boolean {
  return rule.startsWith(`${SHELL_TOOL}(`);
}
