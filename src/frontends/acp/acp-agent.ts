/**
 * `mend --acp`: an Agent Client Protocol agent (the official SDK; no hand-written
 * JSON-RPC), a thin adapter over the session runtime. One SessionRuntime per ACP
 * session; every method maps to runtime calls and the runtime's events map back
 * out as `session/update`s (the shared mapper, src/frontends/shared/acp-updates.ts). Loading opens a session read-only
 * (no lease, nothing written, fine while another process holds it); the first
 * prompt or continuation takes the lease and rebuilds the plan under it.
 */
import { acpServerSpecs } from './acp-mcp-servers.js';
import { mergeServerSpecs, type McpServerSpec } from '../../tools/mcp/mcp-config.js';
import { realpathSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { everyAgent, listSessions } from '../../runtime/list-sessions.js';
import * as acp from '@agentclientprotocol/sdk';
import { errorCodeOf, errorMessageOf } from '../../errors.js';
import { canonicalSessionId } from '../../session/session-ids.js';
import type { TurnOutcome } from '../../engine/engine-events.js';
import type { HostEnv } from '../../runtime/host-env.js';
import type { Decision } from '../../runtime/continuation-policy.js';
import { SessionRuntime, type RuntimeDeps, type SessionTarget } from '../../runtime/session-runtime.js';
import type { AskHost } from '../../runtime/tool-port.js';
import {
  ACP_COMMANDS,
  ACP_MEND_METHODS,
  AcpContinueParamsSchema,
  AcpOpenMetaSchema,
  AcpRecoveryParamsSchema,
  type AcpContinueAnswer,
  type AcpSessionMeta,
  type AcpTurnMeta,
} from '../../wire/acp-extensions.js';
import type { RefusalCode } from '../../wire/error-codes.js';
import { APPROVAL_MODES, APPROVAL_MODE_DESCRIPTIONS, approvalModeFromAlias, type ApprovalMode } from '../../wire/approval-modes.js';
import { camelSummary } from '../shared/recovery-summary.js';
import { runtimeSettingsFrom } from '../../runtime/runtime-settings.js';
import type { RecoverySummaryCamel } from '../../wire/recovery-summary.js';
import { liveUpdates, replayUpdates, stopReasonOf, toolCallFields, type SessionUpdate } from '../shared/acp-updates.js';
import { promptCommand, promptParts } from '../shared/prompt-parts.js';
import { planText, recoveryNotice } from './recovery-text.js';

/** What the command line gives the ACP front end (the CLI's options satisfy it). */
export interface AcpOptions {
  /** Servers every session starts with (--mcp-config, the settings file), besides the editor's. */
  mcpServers?: McpServerSpec[] | undefined;
  mcpFailed?: { name: string; error: string }[] | undefined;
  model: string | undefined;
  approvalMode: ApprovalMode;
  allowedTools: string[];
  maxTurns: number;
  systemPrompt: string | undefined;
  appendSystemPrompt: string | undefined;
  /** --core-tools / --exclude-tools. */
  coreTools: string[] | undefined;
  excludeTools: string[];
  debug: boolean;
}

const PERMISSION_OPTIONS: acp.PermissionOption[] = [
  { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'allow_always', name: 'Always allow this tool in this session', kind: 'allow_always' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject_always', name: 'Always reject this tool in this session', kind: 'reject_always' },
];

const AVAILABLE_COMMANDS: acp.AvailableCommand[] = [
  { name: ACP_COMMANDS.continue, description: 'Continue the interrupted turn of this session (shows the recovery plan first)' },
  { name: ACP_COMMANDS.plan, description: "Show this session's recovery plan; runs nothing" },
];

/** A mend error as a JSON-RPC error: ACP's codes where one fits, mend's own code in `data.code`. */
function requestError(code: string, message: string, sessionId?: string): acp.RequestError {
  if (code === 'session_not_found' || code === 'no_session_to_continue')
    return new acp.RequestError(-32002, message, { code, ...(sessionId ? { sessionId } : {}) });
  if (code === 'usage' || code === 'invalid_resume_target' || code === 'invalid_request') return new acp.RequestError(-32602, message, { code });
  return new acp.RequestError(-32603, message, { code });
}

/** Why an opted-in auto-continue does not start, in this protocol's words (the policy's own hint is the CLI's). */
function autoContinueRefusal(decision: Decision): { code: RefusalCode; reason: string } {
  if (decision.action === 'refused' || decision.action === 'nothing_to_do') return { code: decision.code, reason: decision.message };
  if (decision.action === 'awaiting_confirmation') {
    return { code: 'confirmation_required', reason: 'this session needs a confirmation to continue: type /continue, or call _mend/session/continue' };
  }
  return { code: 'nothing_to_continue', reason: 'nothing to continue' };
}

function turnMeta(outcome: TurnOutcome): AcpTurnMeta {
  return {
    status: outcome.status,
    numTurns: outcome.numTurns,
    durationMs: outcome.durationMs,
    usage: { ...outcome.usage },
    permissionDenials: outcome.permissionDenials.map((d) => ({ ...d })),
    ...(outcome.error ? { error: { ...outcome.error } } : {}),
  };
}

/** One ACP session: its runtime, and what this connection decided for it. */
class AcpSession {
  private readonly rejected = new Set<string>();
  private readonly unsubscribe: () => void;

  constructor(
    readonly id: string,
    readonly runtime: SessionRuntime,
    private readonly send: (update: SessionUpdate) => Promise<void>,
    private readonly requestPermission: (params: acp.RequestPermissionRequest, signal: AbortSignal) => Promise<acp.RequestPermissionResponse>,
  ) {
    this.unsubscribe = runtime.subscribe((event) => {
      for (const update of liveUpdates(event)) void this.send(update);
    });
    runtime.setApprovalHandler(() => this.ask);
  }

  /** The current plan's summary, with the holder the runtime re-checked just now. */
  async summary(): Promise<RecoverySummaryCamel | null> {
    const summary = await this.runtime.summary();
    return summary ? camelSummary(summary) : null;
  }

  /** `_mend/session/continue`, and the `/continue` command. Answers when the continuation has ended. */
  async continueLastTurn(planId: string | undefined, auto = false): Promise<AcpContinueAnswer> {
    const answer = await this.runtime.continueLastTurn({ planId, auto });
    if (!answer.accepted) return { accepted: false, code: answer.code, message: answer.message };
    const outcome = await answer.outcome;
    return {
      accepted: true,
      planId: answer.plan.planId,
      kind: answer.plan.kind,
      stopReason: stopReasonOf(outcome),
      ...(outcome.status === 'error' && outcome.error ? { error: { ...outcome.error } } : {}),
    };
  }

  /** session/request_permission: only an explicit allow runs the tool; no timeout (people take their time). */
  private readonly ask: AskHost = async (call, signal) => {
    if (this.rejected.has(call.name)) return { allow: false, message: `Permission denied: ${call.name} was rejected for the rest of this session` };
    let response: acp.RequestPermissionResponse;
    try {
      response = await this.requestPermission(
        {
          sessionId: this.id,
          toolCall: { ...toolCallFields(call), status: 'pending' },
          options: PERMISSION_OPTIONS,
        },
        signal,
      );
    } catch (error) {
      return { allow: false, message: `Permission denied for ${call.name}: ${signal.aborted ? 'the turn was cancelled' : errorMessageOf(error)}` };
    }
    if (response.outcome.outcome !== 'selected') return { allow: false, message: `Permission denied for ${call.name}: the request was cancelled` };
    switch (response.outcome.optionId) {
      case 'allow_always':
        this.runtime.allowTool(call.name);
        return { allow: true };
      case 'allow_once':
        return { allow: true };
      case 'reject_always':
        this.rejected.add(call.name);
        return { allow: false, message: `Permission denied by the user for ${call.name} (for the rest of this session)` };
      case 'reject_once':
        return { allow: false, message: `Permission denied by the user for ${call.name}` };
      default:
        return { allow: false, message: `Permission denied for ${call.name}: unknown option ${JSON.stringify(response.outcome.optionId)}` };
    }
  };

  async close(): Promise<void> {
    this.runtime.interrupt();
    await this.runtime.close();
    this.unsubscribe();
  }
}

export class AcpAgent {
  private readonly sessions = new Map<string, AcpSession>();
  private notices = false;
  private client: acp.AgentContext | null = null;

  constructor(
    private readonly options: AcpOptions,
    private readonly host: HostEnv,
  ) {}

  private debug(text: string): void {
    if (this.options.debug) this.host.stderr.write(`mend[debug]: ${text}\n`);
  }

  /** The agent app: every ACP method and mend's extensions. */
  app(): acp.AgentApp {
    const m = acp.methods.agent;
    return acp
      .agent({ name: 'mend' })
      .onConnect((connection) => {
        this.client = connection.client;
      })
      .onRequest(m.initialize, ({ params }) => this.initialize(params))
      .onRequest(m.session.new, ({ params }) => this.newSession(params))
      .onRequest(m.session.load, ({ params }) => this.open(params, true))
      .onRequest(m.session.resume, ({ params }) => this.open(params, false))
      .onRequest(m.session.prompt, ({ params }) => this.prompt(params))
      .onNotification(m.session.cancel, ({ params }) => {
        this.sessions.get(canonicalSessionId(params.sessionId))?.runtime.interrupt();
      })
      .onRequest(m.session.setMode, ({ params }) => this.setMode(params))
      .onRequest(m.session.list, ({ params }) => this.list(params))
      .onRequest(m.session.close, ({ params }) => this.close(params.sessionId))
      .onRequest(ACP_MEND_METHODS.recovery, AcpRecoveryParamsSchema, ({ params }) => this.session(params.sessionId).summary())
      .onRequest(ACP_MEND_METHODS.continue, AcpContinueParamsSchema, ({ params }) => this.session(params.sessionId).continueLastTurn(params.planId));
  }

  /** Interrupts every running turn (recorded as aborted) and releases every lease. */
  async closeAll(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((s) => s.close()));
  }

  // ---- methods ------------------------------------------------------------------------------

  private initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.notices = params.clientCapabilities?.session?.notices != null;
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        // stdio servers are baseline; mend's MCP client speaks Streamable HTTP and SSE too.
        mcpCapabilities: { http: true, sse: true },
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
        _meta: {
          mend: {
            version: this.host.runtime.version,
            recovery: true,
            methods: Object.values(ACP_MEND_METHODS),
            commands: AVAILABLE_COMMANDS.map((c) => `/${c.name}`),
            autoContinue: true,
          },
        },
      },
      agentInfo: { name: 'mend', title: 'mend', version: this.host.runtime.version },
      authMethods: [],
    };
  }

  private async newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse> {
    const runtime = await this.openRuntime(params.cwd, { type: 'new' }, false, params.mcpServers);
    const session = this.register(runtime.sessionId, runtime);
    this.afterAnswer(() => this.offerCommands(session));
    return { sessionId: session.id, modes: this.modes(runtime) };
  }

  /** session/load (replay) and session/resume (none): read-only until driven; the recovery summary on the answer. */
  private async open(params: acp.LoadSessionRequest | acp.ResumeSessionRequest, replay: boolean): Promise<acp.LoadSessionResponse & acp.ResumeSessionResponse> {
    const meta = AcpOpenMetaSchema.safeParse((params._meta as { mend?: unknown } | null | undefined)?.mend ?? {});
    const autoContinue = meta.success && meta.data.autoContinue === true;
    // A UUID in any case names one session (the daemon accepts it so too): kept under its lower-case spelling.
    const sessionId = canonicalSessionId(params.sessionId);
    const existing = this.sessions.get(sessionId);
    if (existing) {
      if (existing.runtime.busy) throw requestError('turn_running', 'a turn is running in this session; cancel it or wait for its answer', sessionId);
      this.sessions.delete(sessionId);
      await existing.close();
    }
    const runtime = await this.openRuntime(params.cwd, { type: 'resume', target: sessionId }, autoContinue, params.mcpServers);
    const session = this.register(sessionId, runtime);
    const summary = await session.summary();
    const sends: Array<Promise<void>> = [];
    const history = replay ? await runtime.loadHistory() : null;
    if (history) {
      // Every replayed update goes out before the answer (writes are queued in order).
      for (const update of replayUpdates(history.loaded.conversation)) sends.push(this.sendTo(session.id, update));
    }
    const mend: AcpSessionMeta = { recovery: summary };
    const notice = summary ? recoveryNotice(summary) : null;
    if (notice) {
      sends.push(
        this.sendTo(
          session.id,
          this.notices
            ? { sessionUpdate: 'notice', ...notice, _meta: { mend: { recovery: summary } } }
            : {
                sessionUpdate: 'agent_message_chunk',
                content: { type: 'text', text: `${notice.title}\n${notice.description}\n` },
                _meta: { mend: { notice: true, recovery: summary } },
              },
        ),
      );
    }
    if (autoContinue) {
      const decision = runtime.decide({ type: 'auto_continue', planId: summary?.planId });
      const started = decision.action === 'continue' && decision.execute === 'continuation';
      mend.autoContinue = started ? { started } : { started, ...autoContinueRefusal(decision) };
      if (started) this.afterAnswer(() => void session.continueLastTurn(summary?.planId, true));
    }
    await Promise.all(sends);
    this.afterAnswer(() => this.offerCommands(session));
    this.debug(`${replay ? 'loaded' : 'resumed'} ${session.id} (${summary?.kind ?? 'no records'}, ${sends.length} updates before the answer)`);
    return { modes: this.modes(runtime), _meta: { mend } };
  }

  private async prompt(params: acp.PromptRequest): Promise<acp.PromptResponse> {
    const session = this.session(params.sessionId);
    const command = promptCommand(params.prompt);
    if (command === `/${ACP_COMMANDS.plan}`) {
      await this.sendTo(session.id, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: planText(await session.summary()) } });
      return { stopReason: 'end_turn' };
    }
    if (command === `/${ACP_COMMANDS.continue}`) return this.continueCommand(session);

    const parts = promptParts(params.prompt);
    if (parts.length === 0) throw requestError('invalid_request', 'the prompt has no content (no blocks, or only empty text)', session.id);
    const outcome = await session.runtime.prompt(parts);
    if (outcome.status === 'error') {
      const error = outcome.error ?? { code: 'internal', message: 'the turn failed' };
      throw requestError(error.code, error.message, session.id);
    }
    return { stopReason: stopReasonOf(outcome), _meta: { mend: turnMeta(outcome) } };
  }

  /** `/continue` typed as a prompt: the plan first, then what `_mend/session/continue` does with that plan's id. */
  private async continueCommand(session: AcpSession): Promise<acp.PromptResponse> {
    const summary = await session.summary();
    await this.sendTo(session.id, {
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: planText(summary) },
      _meta: { mend: { recovery: summary } },
    });
    const answer = await session.continueLastTurn(summary?.planId);
    if (!answer.accepted) {
      await this.sendTo(session.id, {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: `Not continued (${answer.code}): ${answer.message}\n` },
      });
      return { stopReason: 'end_turn', _meta: { mend: { continue: answer } } };
    }
    return { stopReason: answer.stopReason, _meta: { mend: { continue: answer } } };
  }

  private async setMode(params: acp.SetSessionModeRequest): Promise<acp.SetSessionModeResponse> {
    const session = this.session(params.sessionId);
    const mode = approvalModeFromAlias(params.modeId);
    if (!mode)
      throw acp.RequestError.invalidParams({ modeId: params.modeId }, `unknown mode ${JSON.stringify(params.modeId)}; modes: ${APPROVAL_MODES.join(', ')}`);
    // Answered once the change is recorded (a record that fails is a warning on the session, not an error here).
    await session.runtime.setApprovalMode(mode);
    return {};
  }

  private async list(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    const deps = this.depsFor(params.cwd ?? this.host.runtime.cwd);
    const sessions: acp.SessionInfo[] = [];
    for (const entry of await deps.store.list(deps.scope)) {
      if (entry.error) continue;
      const prompt = entry.firstPrompt?.replace(/\s+/g, ' ').trim();
      sessions.push({
        sessionId: entry.ref.sessionId,
        cwd: entry.ref.projectRoot,
        ...(prompt ? { title: prompt.length > 80 ? `${prompt.slice(0, 77)}...` : prompt } : {}),
        ...(entry.lastUpdate ? { updatedAt: entry.lastUpdate } : {}),
        _meta: { mend: { records: entry.records, started: entry.started } },
      });
    }
    // Other agents' sessions of this project, read in place: loadable by their path.
    const foreign = await listSessions(deps.store, deps.scope, { ...everyAgent(deps.foreignHomes), mend: false });
    for (const row of foreign) {
      if (row.error || !row.agent) continue;
      const prompt = row.firstPrompt?.replace(/\s+/g, ' ').trim();
      sessions.push({
        sessionId: row.path,
        cwd: deps.scope.projectRoot,
        ...(prompt ? { title: prompt.length > 80 ? `${prompt.slice(0, 77)}...` : prompt } : {}),
        ...(row.lastUpdate ? { updatedAt: row.lastUpdate } : {}),
        _meta: {
          mend: {
            agent: row.agent,
            agentVersion: row.agentVersion ?? null,
            ownerSessionId: row.id,
            records: row.records,
            size: row.size ?? null,
            kind: row.kind,
            cause: row.cause,
            planId: row.planId,
          },
        },
      });
    }
    return { sessions };
  }

  private async close(spelled: string): Promise<acp.CloseSessionResponse> {
    const sessionId = canonicalSessionId(spelled);
    const session = this.sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    this.sessions.delete(sessionId);
    await session.close();
    return {};
  }

  // ---- helpers ------------------------------------------------------------------------------

  private session(sessionId: string): AcpSession {
    const session = this.sessions.get(canonicalSessionId(sessionId));
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    return session;
  }

  private register(id: string, runtime: SessionRuntime): AcpSession {
    const session = new AcpSession(
      id,
      runtime,
      (update) => this.sendTo(id, update),
      (params, signal) => {
        if (!this.client) return Promise.reject(new Error('no client is connected'));
        return this.client.request(acp.methods.client.session.requestPermission, params, { cancellationSignal: signal, stopWaitingOnCancel: true });
      },
    );
    this.sessions.set(id, session);
    return session;
  }

  private sendTo(sessionId: string, update: SessionUpdate): Promise<void> {
    const client = this.client;
    if (!client) return Promise.resolve();
    // A closed connection cannot be told anything more; the log still has it all.
    return client.notify(acp.methods.client.session.update, { sessionId, update }).catch(() => {});
  }

  /** Runs after the current answer is on the wire (the SDK queues the answer before any later write). */
  private afterAnswer(work: () => void): void {
    setImmediate(work);
  }

  private offerCommands(session: AcpSession): void {
    void this.sendTo(session.id, { sessionUpdate: 'available_commands_update', availableCommands: AVAILABLE_COMMANDS });
  }

  private modes(runtime: SessionRuntime): acp.SessionModeState {
    return {
      currentModeId: runtime.settings.approvalMode,
      availableModes: APPROVAL_MODES.map((id) => ({ id, name: id, description: APPROVAL_MODE_DESCRIPTIONS[id] })),
    };
  }

  /** The runtime dependencies of the project of `cwd`: its sessions, its tool boundary, its system prompt. */
  private depsFor(cwd: string): RuntimeDeps {
    if (!isAbsolute(cwd)) throw acp.RequestError.invalidParams({ cwd }, 'cwd must be an absolute path');
    if (this.host.runtimeFor) return this.host.runtimeFor(cwd);
    let projectRoot = cwd;
    try {
      projectRoot = realpathSync(cwd);
    } catch {
      // A directory that vanished still names the project it was.
    }
    const base = this.host.runtime;
    if (projectRoot === base.scope.projectRoot) return { ...base, cwd, scope: { projectRoot, cwd } };
    // Another project, and no composition for it: tools confined to its cwd, no project-specific prompt.
    const { toolSession: _tools, baseSystemPrompt: _prompt, ...rest } = base;
    return { ...rest, cwd, scope: { projectRoot, cwd } };
  }

  private async openRuntime(cwd: string, target: SessionTarget, allowAutoContinue: boolean, mcpServers?: unknown): Promise<SessionRuntime> {
    // The editor's servers for this session, and the command line's (--mcp-config, settings); the editor's win by name.
    const fromEditor = acpServerSpecs(mcpServers);
    const specs = mergeServerSpecs([this.options.mcpServers ?? [], fromEditor.flatMap((r) => (r.ok ? [r.spec] : []))]);
    const settings = runtimeSettingsFrom({
      host: { ...this.options, mcpServers: specs.filter((spec) => spec.transport.kind !== 'sdk') },
      session: { allowAutoContinue },
    });
    try {
      // A new session is driven at once; a loaded one only maybe: it takes the lease on its first turn.
      const runtime = await SessionRuntime.openForHost(this.depsFor(cwd), { target, access: { mode: 'on_demand' }, settings });
      for (const r of fromEditor) if (!r.ok) runtime.addFailedMcpServer(r.name, r.error);
      for (const failed of this.options.mcpFailed ?? []) runtime.addFailedMcpServer(failed.name, failed.error);
      return runtime;
    } catch (error) {
      if (error instanceof acp.RequestError) throw error;
      const sessionId = target.type === 'resume' ? target.target : undefined;
      throw requestError(errorCodeOf(error), errorMessageOf(error), sessionId);
    }
  }
}
