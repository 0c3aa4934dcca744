/**
 * The vocabulary of the session runtime: its settings, what it is built from (the
 * dependencies the composition root hands it), how a session is opened, and what it
 * tells subscribers and continuation callers.
 */
import type { ToolPort } from '../engine/agent-session.js';
import type { EngineEvent, TurnOutcome } from '../engine/engine-events.js';
import type { ModelProvider } from '../providers/provider.js';
import type { RecoveryPlanHead, SessionRecoveryPlan } from '../recovery/plan-types.js';
import type { ApprovalMode } from '../wire/approval-modes.js';
import type { RefusalCode, WireErrorCode } from '../wire/error-codes.js';
import type { ProjectScope, SessionStore, WriterIdentity } from '../store/session-store.js';
import type { ToolSessionContext } from '../tools/tool-context.js';
import type { ToolFilter } from './tool-port.js';
import type { RunIntent } from './continuation-policy.js';
import type { ForeignHomes } from '../foreign/homes.js';
import type { McpServerSpec } from '../tools/mcp/mcp-config.js';

export interface RuntimeSettings {
  model: string | undefined;
  approvalMode: ApprovalMode;
  allowedTools: string[];
  maxTurns: number;
  allowAutoContinue: boolean;
  acceptDegraded: boolean;
  /** Replaces the built-in system prompt (--system-prompt, a host's initialize). */
  systemPrompt?: string | undefined;
  /** Appended to the system prompt after a blank line (--append-system-prompt). */
  appendSystemPrompt?: string | undefined;
  /** Which tools are offered: `only` (undefined: all) minus `exclude`. A call to another is refused, never run. */
  tools?: ToolFilter | undefined;
  /** MCP servers started with the session (--mcp-config, settings, a host's or editor's list). */
  mcpServers?: McpServerSpec[] | undefined;
}

export interface RuntimeDeps {
  store: SessionStore;
  scope: ProjectScope;
  identity: WriterIdentity;
  cwd: string;
  version: string;
  newId: () => string;
  now: () => string;
  clock: () => number;
  /** A lazy provider for a model name: settings are checked only when a model call is needed. */
  provider: (model: string | undefined) => () => Promise<ModelProvider>;
  tools?: ToolPort;
  /** The project boundary, the tools' environment and the secrets to redact. */
  toolSession?: ToolSessionContext;
  /** The built-in system prompt (src/engine/system-prompt.ts), built by the composition root. */
  baseSystemPrompt?: () => string;
  /** Where other agents keep their sessions (listed with `sessions list --agent`, the ACP and daemon lists, the TUI picker). */
  foreignHomes?: ForeignHomes;
  /** Where MCP servers' stderr and connection events go (the debug log). */
  mcpLog?: (line: string) => void;
  /** How long an MCP server may take to connect (default 30 s). */
  mcpConnectTimeoutMs?: number;
  /** Process-wide stop (a signal): aborts the running turn with its reason and ends the queue. */
  signal?: AbortSignal;
}

export type SessionTarget = { type: 'new'; sessionId?: string | undefined } | { type: 'resume'; target: string } | { type: 'latest' };

export interface OpenRequest {
  target: SessionTarget;
  /**
   * With resume/latest: work in a copy. Created only when the access is `write`. `forContinuation`:
   * the copy is made to continue the source's interrupted turn, which is refused while another
   * process still writes the source (its "interrupted" tool may still be running).
   */
  fork?: { sessionId?: string | undefined; forContinuation?: boolean } | undefined;
  /**
   * `inspect`: no lease, never writes. `write`: the lease is taken before loading.
   * `on_demand` (resume/latest only): opened like `inspect`, so loading writes nothing
   * and works on a session another process holds; the first prompt or continuation
   * takes the lease and rebuilds the plan under it (refused with `session_locked`
   * while another process holds it).
   */
  access: 'inspect' | 'write' | 'on_demand';
  settings: RuntimeSettings;
  /**
   * When a resumed session's histories are read. `eager` (the default): every
   * record at open, which a run that sends the history to a model or replays it needs
   * anyway (reading it once is the fastest way there). `on_demand`: the plan comes from
   * the store's outline and the histories are read the first time something asks for
   * them; for a run that shows the plan and ends (the recovery line alone never asks).
   */
  histories?: 'eager' | 'on_demand';
  /**
   * Another agent's session file (never written): `at_open` copies it into mend's store as a
   * new session while opening (a run that continues it or sends a prompt at once). Without it
   * the file is read in place, whatever the access, and the first turn makes the copy: opening
   * it anywhere writes nothing until the user continues it in mend.
   */
  copyForeign?: 'at_open';
}

/** How a host drives the session it opens (SessionRuntime.openForHost decides the lease from it). */
export type HostAccess =
  /** A headless or stream-json run: what it was asked to do. */
  | { mode: 'run'; intent: RunIntent }
  /** The daemon and the terminal UI: write, else read-only until the holder is gone. */
  | { mode: 'write_or_read_only' }
  /** ACP: a loaded session takes the lease on its first turn. */
  | { mode: 'on_demand' }
  /** `mend plan`: never a lease. */
  | { mode: 'inspect' };

export interface HostOpenRequest {
  target: SessionTarget;
  /** With resume/latest: work in a copy (made only by a host that writes). */
  fork?: { sessionId?: string | undefined } | undefined;
  settings: RuntimeSettings;
  access: HostAccess;
  /** What the host reads: only the plan (planned from the outline) or the histories too. */
  reads?: 'plan' | 'histories';
}

export type RuntimeEvent = EngineEvent | { type: 'recovery_plan'; plan: SessionRecoveryPlan };

export type ContinueAnswer =
  | { accepted: true; plan: SessionRecoveryPlan; outcome: Promise<TurnOutcome> }
  /** A refusal (`RefusalCode`), or the code of an error met while deciding. */
  | { accepted: false; code: RefusalCode | WireErrorCode; message: string; plan: RecoveryPlanHead | null };
