/**
 * How an MCP tool is named to the model and in approval rules: `mcp__<server>__<tool>`, as
 * Claude Code names them. Server and tool names are reduced to the characters a model API
 * accepts in a function name. One source: the tool source builds names with it, approval
 * rules match them, and recovery reads the server back out of a recorded call.
 */

export const MCP_PREFIX = 'mcp__';

/** Characters outside `[A-Za-z0-9_-]` become `_` (OpenAI's function-name alphabet). */
export function normalizeMcpName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

export function mcpToolName(server: string, tool: string): string {
  return `${MCP_PREFIX}${normalizeMcpName(server)}__${normalizeMcpName(tool)}`;
}

/** The server and tool of an `mcp__server__tool` name (split at the first `__` after the prefix); undefined for any other name. */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(MCP_PREFIX)) return undefined;
  const rest = name.slice(MCP_PREFIX.length);
  const cut = rest.indexOf('__');
  if (cut <= 0 || cut + 2 >= rest.length) return undefined;
  return { server: rest.slice(0, cut), tool: rest.slice(cut + 2) };
}

/**
 * Whether an allowed-tools rule names this MCP tool: the tool itself (`mcp__s__t`), the whole
 * server (`mcp__s`, or `mcp__s__*`), as Claude Code's permission rules do.
 */
export function mcpRuleMatches(rule: string, server: string, toolName: string): boolean {
  const serverName = `${MCP_PREFIX}${normalizeMcpName(server)}`;
  return rule === toolName || rule === serverName || rule === `${serverName}__*`;
}
