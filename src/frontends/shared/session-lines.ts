/**
 * The lines every stdio run starts with: `init`, then on a resumed session the
 * `recovery` line saying what the plan is and what this run does about it.
 */
import type { Decision } from '../../runtime/continuation-policy.js';
import type { HostEnv } from '../../runtime/host-env.js';
import type { SessionRuntime } from '../../runtime/session-runtime.js';
import type { ProjectScope } from '../../store/session-store.js';
import { toolOffered } from '../../runtime/tool-port.js';
import { realpathSync } from 'node:fs';
import { toRecoverySummary } from './recovery-summary.js';
import type { SystemInitMessage, SystemRecoveryMessage } from '../../wire/messages.js';
import { claudePermissionMode } from '../../wire/approval-modes.js';
import type { OutputSink } from './output-sink.js';

export const CAPABILITIES = {
  recovery: true,
  continue_last_turn: true,
  get_recovery_plan: true,
  interrupt: true,
  can_use_tool: true,
} as const;

/** What the `init` line names besides the session: the host side of a HostEnv. */
export type InitHost = Pick<HostEnv, 'modelName' | 'toolNames'> & { runtime: Pick<HostEnv['runtime'], 'newId' | 'cwd' | 'version'> };

/** `modeName`: the approval mode as the caller named it (Claude's dontAsk survives into `permissionMode`). */
export function initMessage(runtime: SessionRuntime, host: InitHost, modeName?: string): SystemInitMessage {
  return {
    type: 'system',
    subtype: 'init',
    uuid: host.runtime.newId(),
    session_id: runtime.sessionId,
    cwd: host.runtime.cwd,
    tools: [...host.toolNames, ...runtime.mcpToolNames()].filter((name) => toolOffered(name, runtime.settings.tools)),
    model: host.modelName(runtime.settings.model),
    permission_mode: runtime.settings.approvalMode,
    mend_version: host.runtime.version,
    resumed: runtime.resumed,
    capabilities: { ...CAPABILITIES },
    // Claude Code's init fields, for hosts on its SDK: its mode name, no Anthropic key, the MCP servers, no slash commands.
    permissionMode: claudePermissionMode(runtime.settings.approvalMode, modeName),
    apiKeySource: 'none',
    mcp_servers: runtime.mcpServerStatuses(),
    slash_commands: [],
  };
}

export function printInit(out: OutputSink, runtime: SessionRuntime, host: HostEnv, modeName?: string): void {
  out.emit(initMessage(runtime, host, modeName));
}

/** The recovery line of a resumed session (null for a new one). */
export function recoveryLine(runtime: SessionRuntime, decision: Decision, newId: () => string): SystemRecoveryMessage | null {
  const plan = runtime.recoveryPlan;
  const loaded = runtime.loadedSession;
  if (!plan || !loaded) return null;
  const line: SystemRecoveryMessage = {
    type: 'system',
    subtype: 'recovery',
    uuid: newId(),
    session_id: runtime.sessionId,
    ...toRecoverySummary(plan, loaded.conversation),
    // "Nothing to continue" is not a refusal: the line says nothing was done.
    action: decision.action === 'nothing_to_do' ? 'none' : decision.action,
  };
  if (decision.action === 'refused') line.reason = decision.message;
  return line;
}

/**
 * A session resumed by path from another project's directory (`--resume PATH` elsewhere)
 * runs its tools here, not where it was recorded: said on the recovery line and in the notice.
 */
export function projectMismatch(runtime: SessionRuntime, scope: ProjectScope): string | undefined {
  const conversation = runtime.loadedSession?.conversation;
  const recorded = conversation?.recordedCwd ?? undefined;
  const { projectRoot, cwd } = scope;
  if (recorded === undefined || recorded === projectRoot || recorded === cwd || realPath(recorded) === projectRoot) return undefined;
  return `this session was recorded in ${recorded}; it now runs in ${projectRoot}, and its tools act here`;
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Prints `init` and the recovery line (with its notice in text mode). */
export function printSessionStart(out: OutputSink, runtime: SessionRuntime, host: HostEnv, decision: Decision, resumedByPath = false, modeName?: string): void {
  printInit(out, runtime, host, modeName);
  const line = recoveryLine(runtime, decision, host.runtime.newId);
  if (!line) return;
  const mismatch = resumedByPath ? projectMismatch(runtime, host.runtime.scope) : undefined;
  if (mismatch) {
    line.project_warning = mismatch;
    line.visible_notice = line.visible_notice ? `${line.visible_notice} Note: ${mismatch}.` : `Note: ${mismatch}.`;
  }
  out.emit(line);
  out.setRecovery(line);
  if (line.visible_notice) out.notice(line.visible_notice);
}
