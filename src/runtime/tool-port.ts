/**
 * Connects the engine to the built-in tools and to an approval policy. Without
 * a host to ask (the headless CLI) 'ask' is a refusal; a front end that can ask
 * (a stream-json host after `initialize`, an editor, a person) supplies AskHost.
 */
import { SHELL_TOOL, shellRuleMatches } from '../wire/tool-aliases.js';
import { mcpRuleMatches, parseMcpToolName } from '../wire/mcp-names.js';
import type { ApprovalDecision, ApprovalGate, ToolPort } from '../engine/agent-session.js';
import { decideApproval } from '../tools/approval.js';
import { createToolRegistry } from '../tools/registry.js';
import type { ToolDeclaration } from '../providers/provider.js';
import { DEFAULT_OUTPUT_CAP, type Tool } from '../tools/tool.js';
import type { ToolSessionContext } from '../tools/tool-context.js';
import type { ApprovalMode } from '../wire/approval-modes.js';

export interface ApprovalSettings {
  approvalMode: ApprovalMode;
  allowedTools: string[];
  tools?: ToolFilter | undefined;
}

const registry = createToolRegistry();
export const TOOL_NAMES: readonly string[] = registry.names();
export const toolDeclarations = (): ToolDeclaration[] => registry.declarations();

/** What a built-in tool does ('read' | 'edit' | 'execute'), for front ends that show calls; undefined for unknown names. */
export function toolKindOf(name: string): 'read' | 'edit' | 'execute' | undefined {
  return registry.get(name)?.kind;
}

/**
 * The built-in tools for one session. `session` carries the project boundary (root and
 * added directories), the tools' environment and the secret values to redact; without
 * it tools are confined to `cwd` and shell commands get a scrubbed environment.
 */
export interface ToolFilter {
  only?: readonly string[] | undefined;
  exclude?: readonly string[] | undefined;
}

/** Whether a tool is offered in this session (read per call: a host may change the filter). */
export function toolOffered(name: string, filter: ToolFilter | undefined): boolean {
  // MCP tools come with their servers: `only` (--tools, --core-tools) names built-in tools; an exclude rule may name an MCP tool or server.
  const mcp = parseMcpToolName(name);
  if (mcp) return !(filter?.exclude ?? []).some((rule) => mcpRuleMatches(rule, mcp.server, name));
  if (filter?.only !== undefined && !filter.only.includes(name)) return false;
  return !(filter?.exclude ?? []).includes(name);
}

/** Tools besides the built-ins (a session's MCP servers): their set changes, so it is read per request and per call. */
export interface ToolSource {
  tools(): readonly Tool[];
  /** Why a tool of this name cannot run now (its server stopped), for a tool it does not offer; undefined when unknown. */
  unavailable(name: string): string | undefined;
  /** Resolves once pending changes to the set have been read (a `tools/list_changed` being followed up). */
  ready(): Promise<void>;
}

const noExtraTools: ToolSource = { tools: () => [], unavailable: () => undefined, ready: () => Promise.resolve() };

/** A tool by the name the model calls it: built-in first, then the extra tools. */
export function findTool(name: string, extra: ToolSource = noExtraTools): Tool | undefined {
  return registry.get(name) ?? extra.tools().find((tool) => tool.name === name);
}

export function createToolPort(
  cwd: string,
  session?: ToolSessionContext,
  filter: () => ToolFilter | undefined = () => undefined,
  outputCap = DEFAULT_OUTPUT_CAP,
  extra: ToolSource = noExtraTools,
): ToolPort {
  const all = (): ToolDeclaration[] => [
    ...registry.declarations(),
    ...extra.tools().map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })),
  ];
  return {
    declarations: () => all().filter((d) => toolOffered(d.name, filter())),
    ready: () => extra.ready(),
    async run(call, signal) {
      const tool = findTool(call.name, extra);
      const unavailable = tool ? undefined : extra.unavailable(call.name);
      if (unavailable !== undefined) return { output: unavailable, isError: true };
      if (!tool || !toolOffered(call.name, filter())) {
        const offered = all()
          .map((d) => d.name)
          .filter((name) => toolOffered(name, filter()));
        return { output: `Unknown or disabled tool ${JSON.stringify(call.name)}. Available tools: ${offered.join(', ')}`, isError: true };
      }
      const outcome = await tool.execute(call.args, { cwd, signal, outputCap, ...session });
      return {
        output: outcome.output,
        isError: outcome.isError,
        ...(outcome.display !== undefined ? { display: outcome.display } : {}),
        ...(outcome.details !== undefined ? { details: outcome.details } : {}),
      };
    },
  };
}

export type AskHost = (call: { id: string; name: string; args: Record<string, unknown> }, signal: AbortSignal) => Promise<ApprovalDecision>;

export function approvalGate(options: ApprovalSettings, askHost?: () => AskHost | undefined, extra: ToolSource = noExtraTools): ApprovalGate {
  return async (call, signal) => {
    const tool = findTool(call.name, extra);
    // Unknown and disabled tools are answered by the tool port with an error; nothing runs, nobody is asked.
    if (!tool || !toolOffered(call.name, options.tools)) return { allow: true };
    // Shell rules (`run_shell_command(git status:*)`, from a host's Claude-style lists) judge the command itself.
    const command = call.name === SHELL_TOOL && typeof call.args['command'] === 'string' ? call.args['command'] : undefined;
    const deniedBy = command === undefined ? undefined : (options.tools?.exclude ?? []).find((rule) => shellRuleMatches(rule, command));
    if (deniedBy) return { allow: false, message: `Permission denied: the command matches the disallowed rule ${deniedBy}.` };
    const allowedByRule = command !== undefined && options.approvalMode !== 'plan' && options.allowedTools.some((rule) => shellRuleMatches(rule, command));
    if (allowedByRule) return { allow: true };
    const decision = decideApproval(tool, options.approvalMode, options.allowedTools);
    if (decision === 'allow') return { allow: true };
    if (decision === 'deny') {
      return {
        allow: false,
        message: `Permission denied: ${call.name} changes state and approval mode "${options.approvalMode}" is read-only (another --approval-mode allows it).`,
      };
    }
    const ask = askHost?.();
    if (ask) return ask(call, signal);
    return {
      allow: false,
      message:
        `Permission denied: ${call.name} needs approval in "${options.approvalMode}" mode and nobody can be asked in a headless run. ` +
        `Allow it with --allowed-tools ${call.name}${tool.kind === 'edit' && !tool.mcp ? ', --approval-mode auto-edit' : ''} or --approval-mode yolo.`,
    };
  };
}

export function headlessApproval(options: ApprovalSettings): ApprovalGate {
  return approvalGate(options);
}
