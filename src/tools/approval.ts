/**
 * Whether a tool call may run without asking, following Qwen Code's approval modes.
 * Pure: the engine decides what 'ask' means (the headless CLI treats it as a refusal).
 */
import type { ApprovalMode } from '../wire/approval-modes.js';
import { mcpRuleMatches } from '../wire/mcp-names.js';
import type { McpToolOrigin, Tool } from './tool.js';

export { ApprovalModeSchema, type ApprovalMode } from '../wire/approval-modes.js';

/** What the mode says about one call; the engine's ApprovalDecision is what finally happens. */
export type ApprovalVerdict = 'allow' | 'ask' | 'deny';

/**
 * - read tools never change state and always run;
 * - plan is read-only: nothing else runs, not even tools listed in allowedTools;
 * - yolo runs everything;
 * - auto-edit runs file edits and asks for commands;
 * - default asks for anything that changes state;
 * - outside plan, a tool named in allowedTools runs without asking.
 */
export function decideApproval(tool: Pick<Tool, 'name' | 'kind' | 'mcp'>, mode: ApprovalMode, allowedTools: readonly string[] = []): ApprovalVerdict {
  if (tool.mcp) return decideMcpApproval(tool.name, tool.mcp, mode, allowedTools);
  if (tool.kind === 'read') return 'allow';
  if (mode === 'plan') return 'deny';
  if (mode === 'yolo') return 'allow';
  if (allowedTools.includes(tool.name)) return 'allow';
  if (mode === 'auto-edit' && tool.kind === 'edit') return 'allow';
  return 'ask';
}

/**
 * MCP tools reach systems mend cannot see, so none counts as harmless by its kind:
 * - plan runs only the tools their server marks read-only (annotations.readOnlyHint);
 * - yolo runs everything;
 * - a rule naming the tool (`mcp__s__t`) or its whole server (`mcp__s`, `mcp__s__*`) runs it unasked;
 * - otherwise (default and auto-edit alike) the host is asked, read-only or not.
 */
function decideMcpApproval(name: string, origin: McpToolOrigin, mode: ApprovalMode, allowedTools: readonly string[]): ApprovalVerdict {
  if (mode === 'plan') return origin.readOnly ? 'allow' : 'deny';
  if (mode === 'yolo') return 'allow';
  if (allowedTools.some((rule) => mcpRuleMatches(rule, origin.server, name))) return 'allow';
  return 'ask';
}
