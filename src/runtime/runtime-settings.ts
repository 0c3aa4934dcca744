/**
 * The one way to build a runtime's settings, from options split by how long they
 * live (as the Codex SDK splits client, thread and turn options): what the host
 * process was started with (the command line of a run, `mend serve`, `mend --acp`),
 * what the opener decides for one session, and what one turn may override. Every
 * front end builds its settings here, so none can drop a host option on the way
 * (the system prompt, the tool filter, MCP servers).
 */
import type { McpServerSpec } from '../tools/mcp/mcp-config.js';
import type { ApprovalMode } from '../wire/approval-modes.js';
import type { RuntimeSettings } from './runtime-types.js';

/** For the whole host process: its command line. */
export interface HostOptions {
  model: string | undefined;
  approvalMode: ApprovalMode;
  allowedTools: readonly string[];
  maxTurns: number;
  systemPrompt?: string | undefined;
  appendSystemPrompt?: string | undefined;
  /** Only these tools are offered (--core-tools); undefined: all. */
  coreTools?: readonly string[] | undefined;
  /** Never offered, never run (--exclude-tools). */
  excludeTools?: readonly string[] | undefined;
  mcpServers?: readonly McpServerSpec[] | undefined;
}

/** For one session: what the host decided when opening it. */
export interface SessionOptions {
  /** A mode chosen for this session (a daemon client's, a TUI's cycle); the host's otherwise. */
  approvalMode?: ApprovalMode | undefined;
  /** The caller opted in to auto-continuing what the policy allows (--auto-continue, ACP's `_meta`). */
  allowAutoContinue?: boolean | undefined;
  /** A person confirmed prompts on a degraded history (--accept-degraded). */
  acceptDegraded?: boolean | undefined;
}

/** For the turns of this opening. */
export interface TurnOptions {
  maxTurns?: number | undefined;
}

export function runtimeSettingsFrom(options: { host: HostOptions; session?: SessionOptions; turn?: TurnOptions }): RuntimeSettings {
  const { host, session = {}, turn = {} } = options;
  return {
    model: host.model,
    approvalMode: session.approvalMode ?? host.approvalMode,
    allowedTools: [...host.allowedTools],
    maxTurns: turn.maxTurns ?? host.maxTurns,
    allowAutoContinue: session.allowAutoContinue ?? false,
    acceptDegraded: session.acceptDegraded ?? false,
    systemPrompt: host.systemPrompt,
    appendSystemPrompt: host.appendSystemPrompt,
    tools: { only: host.coreTools ? [...host.coreTools] : undefined, exclude: [...(host.excludeTools ?? [])] },
    ...(host.mcpServers?.length ? { mcpServers: [...host.mcpServers] } : {}),
  };
}

/** What an inspecting command needs (it runs no turn): the defaults. */
export const INSPECT_HOST_OPTIONS: HostOptions = { model: undefined, approvalMode: 'default', allowedTools: [], maxTurns: 1 };
