/**
 * SessionRuntime: one open session, and the single way every front end drives
 * mend. It opens (new, resume, fork or inspect), keeps the recovery plan, holds
 * the writer lease, queues turns one at a time, executes continuations under the
 * one policy (continuation-policy.ts) and tells subscribers what happens as
 * domain events. Front ends map their protocol to these calls and the events
 * back out; none of them sees a path, a lock or a wire format of another.
 *
 * A run that will write takes the lease BEFORE loading, so the plan it shows and
 * executes is the one built under the lease. Inspecting takes no lease and
 * writes nothing (with or without a fork: a fork is created only to write).
 */
import { MendError, errorCodeOf, errorMessageOf, isMendError } from '../errors.js';
import { AgentSession, type ApprovalGate } from '../engine/agent-session.js';
import type { TurnOutcome } from '../engine/engine-events.js';
import { RecordBuilder } from '../engine/record-builder.js';
import type { RecoveryPlanHead, SessionRecoveryPlan } from '../recovery/plan-types.js';
import type { ActiveWriter } from '../session/active-writer.js';
import type { LoadedHead, LoadedSession } from '../session/conversation.js';
import { turnAbortReasonOf, type Part } from '../session/records.js';
import { canonicalSessionId, isSessionId } from '../session/session-ids.js';
import type { ApprovalMode } from '../wire/approval-modes.js';
import type { RefusalCode } from '../wire/error-codes.js';
import type { SessionRef, WriterLease } from '../store/session-store.js';
import { REFUSAL_MESSAGES, decideRecoveryAction, type Decision, type RunIntent } from './continuation-policy.js';
import { forkInto } from './fork-session.js';
import { importForeignSession } from './foreign-import.js';
import { RecordChain } from './record-chain.js';
import { approvalGate, createToolPort, type AskHost } from './tool-port.js';
import { McpHub, type McpServerStatus } from '../tools/mcp/mcp-hub.js';
import type { McpServerSpec } from '../tools/mcp/mcp-config.js';
import type { McpMessageChannel } from '../tools/mcp/control-channel-transport.js';
import { TurnQueue } from './turn-queue.js';
import { contextFor, loadAndPlan, loadPlanHead, refreshPlanCheckpoint, refusedOutcome } from './load-and-plan.js';
import type { ContinueAnswer, HostOpenRequest, OpenRequest, RuntimeDeps, RuntimeEvent, RuntimeSettings } from './runtime-types.js';
import { summarizePlan, type PlanSummary } from './plan-summary.js';
import { sameHolder } from '../session/active-writer.js';

export type { ContinueAnswer, HostAccess, HostOpenRequest, OpenRequest, RuntimeDeps, RuntimeEvent, RuntimeSettings, SessionTarget } from './runtime-types.js';
export { loadAndPlan, loadPlanHead, refusedOutcome } from './load-and-plan.js';

/** A plan checkpoint refresh runs at most one part in REFRESH_DUTY of a session's wall time. */
const REFRESH_DUTY = 20;

const background = new Set<Promise<void>>();

function trackBackground(work: Promise<void>): void {
  const done = work.catch(() => undefined);
  background.add(done);
  void done.finally(() => background.delete(done));
}

/** Resolves once every checkpoint refresh that a `close({checkpoint: 'background'})` left running has ended. */
export async function settledBackgroundCheckpoints(): Promise<void> {
  while (background.size > 0) await Promise.allSettled([...background]);
}

export class SessionRuntime {
  readonly settings: RuntimeSettings;
  private readonly listeners = new Set<(event: RuntimeEvent) => void>();
  private agent: AgentSession | null = null;
  private modelChanged = false;
  private askHost: () => AskHost | undefined = () => undefined;
  /** Whether `plan` still describes the log (no turn has run since it was built). */
  private planFresh = true;
  /** The startup plan's pending continuation is consumed by the first prompt or continuation. */
  private recoveryPending: boolean;
  private readonly queue: TurnQueue;
  private closed = false;
  /** The label a front end gave the turn that is running (see `turnLabel`). */
  private runningLabel: string | undefined;
  /** The session's MCP servers: started with a session that may run tools, stopped by close(). */
  private readonly mcp: McpHub;

  /** Set once another agent's session was copied into the store: the plan id of its file as read in place. */
  private importedSourcePlanId: string | undefined;

  private constructor(
    private readonly deps: RuntimeDeps,
    private currentRef: SessionRef,
    private currentSessionId: string,
    readonly resumed: boolean,
    private lease: WriterLease | null,
    private loaded: LoadedHead | null,
    private plan: RecoveryPlanHead | null,
    /** The live holder when inspecting a session another process writes (re-checked: see `activeWriter`). */
    private holder: ActiveWriter | null,
    settings: RuntimeSettings,
    /** Opened `on_demand`: the first turn takes the lease. */
    private readonly leaseOnDemand = false,
  ) {
    this.settings = { ...settings, allowedTools: [...settings.allowedTools] };
    this.recoveryPending = plan?.canContinue === true;
    this.queue = new TurnQueue(deps.signal);
    this.mcp = new McpHub({
      clientVersion: deps.version,
      log: deps.mcpLog ?? (() => undefined),
      cwd: deps.cwd,
      ...(deps.mcpConnectTimeoutMs !== undefined ? { connectTimeoutMs: deps.mcpConnectTimeoutMs } : {}),
      ...(deps.toolSession ? { baseEnv: deps.toolSession.env } : {}),
    });
    // An inspecting run never runs a tool: its servers are not started.
    if ((lease !== null || leaseOnDemand) && settings.mcpServers?.length) this.mcp.add(settings.mcpServers);
  }

  // ---- MCP servers --------------------------------------------------------------------------

  /** More MCP servers (a host's initialize, an editor's session/new); `channel` carries the host's in-process (sdk) servers. */
  addMcpServers(specs: readonly McpServerSpec[], channel?: McpMessageChannel): void {
    this.mcp.add(specs, channel);
  }

  /** A server whose configuration could not be read: listed as failed, the session runs without it. */
  addFailedMcpServer(name: string, error: string): void {
    this.mcp.addFailed(name, error);
  }

  /** Each MCP server and its status (`pending`, `connected`, `failed` with the reason). */
  mcpServerStatuses(): McpServerStatus[] {
    return this.mcp.statuses();
  }

  /** Names of the MCP tools offered now. */
  mcpToolNames(): string[] {
    return this.mcp.tools().map((tool) => tool.name);
  }

  /** Resolves once every MCP server added so far is connected or failed. */
  mcpSettled(): Promise<void> {
    return this.mcp.settled();
  }

  /** A message a host sent for one of its SDK servers; false when no such server. */
  deliverMcpMessage(server: string, message: unknown): boolean {
    return this.mcp.deliver(server, message);
  }

  // ---- opening ------------------------------------------------------------------------------

  static async open(deps: RuntimeDeps, request: OpenRequest): Promise<SessionRuntime> {
    const { store, scope } = deps;
    const write = request.access === 'write';
    if (request.target.type === 'new') {
      const sessionId = canonicalSessionId(request.target.sessionId ?? deps.newId());
      if (!isSessionId(sessionId)) throw new MendError('usage', `--session-id must be a UUID: ${sessionId}`);
      const ref = await store.newSession(scope, sessionId);
      const lease = write ? await store.acquire(ref, deps.identity) : null;
      return new SessionRuntime(deps, ref, sessionId, false, lease, null, null, null, request.settings);
    }

    // Refused before touching storage when it is neither a session id nor a log path.
    const source = request.target.type === 'resume' ? await store.resolve(scope, request.target.target) : await store.latest(scope);
    if (source === null) throw new MendError('no_session_to_continue', `no session to continue for ${scope.projectRoot}`);
    if (!(await store.exists(source))) throw new MendError('session_not_found', `session not found: ${source.location}`, { path: source.location });

    if (source.foreign && write && (request.copyForeign === 'at_open' || request.fork)) {
      // Another agent's file is never written: continuing it (or a prompt on it) works in a mend copy.
      const imported = await importForeignSession(deps, source, request.fork?.sessionId);
      try {
        const { loaded, plan } = await loadAndPlan(store, imported.ref, request.settings.allowAutoContinue, null);
        const runtime = new SessionRuntime(deps, imported.ref, imported.sessionId, true, imported.lease, loaded, plan, null, request.settings);
        runtime.importedSourcePlanId = imported.sourcePlanId;
        return runtime;
      } catch (error) {
        await imported.lease.release();
        throw error;
      }
    }

    if (request.fork && write) {
      // One rule for a fork of a session another process is writing: it never retries that
      // run's unfinished turn (the run is still answering it). Continuing such a fork would
      // do nothing else: refused. A fork for a new prompt leaves the turn out (forkInto).
      const holder = await store.activeWriter(source);
      if (holder && request.fork.forContinuation) {
        throw new MendError(
          'session_locked',
          `session ${source.sessionId || source.location} is in use by ${holder.host} pid ${holder.pid} (since ${holder.since}): a fork of a running session never retries its unfinished turn; fork it with a new prompt, or continue once that run has ended`,
          { ...holder },
        );
      }
      const sessionId = canonicalSessionId(request.fork.sessionId ?? deps.newId());
      const ref = await store.newSession(scope, sessionId);
      const lease = await store.acquire(ref, deps.identity);
      try {
        await forkInto(store, source, lease, contextFor(sessionId, deps), { sourceRunning: holder !== null });
        // The fork is held by nobody else: its plan is its own (the source's live turn stayed behind).
        const { loaded, plan } = await loadAndPlan(store, ref, request.settings.allowAutoContinue, null);
        return new SessionRuntime(deps, ref, sessionId, true, lease, loaded, plan, null, request.settings);
      } catch (error) {
        await lease.release();
        throw error;
      }
    }

    if (source.foreign) {
      // Read in place, like a session opened on demand: the first turn copies it (takeLeaseOnDemand).
      const { loaded, plan } =
        request.histories === 'on_demand'
          ? await loadPlanHead(store, source, request.settings.allowAutoContinue, null)
          : await loadAndPlan(store, source, request.settings.allowAutoContinue, null);
      const sessionId = loaded.conversation.sessionId || source.sessionId;
      return new SessionRuntime(deps, { ...source, sessionId }, sessionId, true, null, loaded, plan, null, request.settings, request.access !== 'inspect');
    }

    const lease = write ? await store.acquire(source, deps.identity) : null;
    try {
      const holder = lease ? null : await store.activeWriter(source);
      const { loaded, plan } =
        request.histories === 'on_demand'
          ? await loadPlanHead(store, source, request.settings.allowAutoContinue, holder)
          : await loadAndPlan(store, source, request.settings.allowAutoContinue, holder);
      // New records need an id even in a log that names none (an empty file not named by a UUID).
      const sessionId = loaded.conversation.sessionId || source.sessionId;
      // A file that names no session (0 bytes, or nothing but damaged lines, under a name that
      // is not a UUID) has nothing to resume, and writing mend's records into it under a made-up
      // id would turn someone's file into a session: refused, as a session error.
      if (sessionId === '' && write) {
        throw new MendError(
          'session_read_failed',
          `${source.location} holds no session to resume: ${loaded.conversation.totalRecords === 0 ? 'it has no valid record' : 'no record names a session id'}, and its name is not a session id; start a new session instead (mend -p TEXT, or --session-id UUID)`,
          { path: source.location },
        );
      }
      const onDemand = request.access === 'on_demand' && !request.fork;
      return new SessionRuntime(deps, { ...source, sessionId }, sessionId, true, lease, loaded, plan, holder, request.settings, onDemand);
    } catch (error) {
      await lease?.release();
      throw error;
    }
  }

  /**
   * Opens a session the way a host drives it: the runtime chooses the lease strategy and
   * the reader, the host says what it is and what it will read.
   * - `run` (a headless or stream-json run): writes unless the intent only inspects; a
   *   fork made to continue is refused while the source is held elsewhere;
   * - `write_or_read_only` (the daemon, the terminal UI): writes; a session another live
   *   process holds opens read-only and takes the lease on its first turn once free;
   * - `on_demand` (ACP): a new session writes; a loaded one takes the lease on its first turn;
   * - `inspect` (`mend plan`): never a lease, never a write.
   * Reader: a host that shows only the plan (`reads: 'plan'`, the default of an inspecting
   * run) is planned from the store's outline; everything else reads the full records.
   */
  static async openForHost(deps: RuntimeDeps, request: HostOpenRequest): Promise<SessionRuntime> {
    const { target, settings, access } = request;
    const inspecting = access.mode === 'inspect' || (access.mode === 'run' && access.intent.type === 'inspect');
    const reads = request.reads ?? (inspecting ? 'plan' : 'histories');
    const histories = reads === 'plan' ? 'on_demand' : 'eager';
    const base = { target, settings, histories } as const;
    switch (access.mode) {
      case 'run': {
        const intent = access.intent.type;
        const forContinuation = intent === 'continue' || intent === 'auto_continue';
        const fork = request.fork ? { ...request.fork, forContinuation } : undefined;
        // A continuation or a prompt writes at once: another agent's session is copied into mend's store while opening.
        const copy = intent === 'continue' || intent === 'prompt' ? { copyForeign: 'at_open' as const } : {};
        return SessionRuntime.open(deps, { ...base, ...copy, fork, access: inspecting ? 'inspect' : 'write' });
      }
      case 'inspect':
        return SessionRuntime.open(deps, { ...base, access: 'inspect' });
      case 'on_demand':
        return SessionRuntime.open(deps, { ...base, fork: request.fork, access: target.type === 'new' ? 'write' : 'on_demand' });
      case 'write_or_read_only':
        try {
          return await SessionRuntime.open(deps, { ...base, fork: request.fork, access: 'write' });
        } catch (error) {
          if (target.type === 'new' || !isMendError(error, 'session_locked')) throw error;
          // Held by another live process: shown read-only; the first turn takes the lease once that holder is gone.
          return SessionRuntime.open(deps, { ...base, access: 'on_demand' });
        }
    }
  }

  // ---- state --------------------------------------------------------------------------------

  /**
   * The other process holding this session's lease, as last checked (null when this
   * runtime holds it or nobody does). Re-checked by `currentPlan`/`summary` and on every
   * turn, so a holder that died is noticed on the next request.
   */
  get activeWriter(): ActiveWriter | null {
    return this.lease ? null : this.holder;
  }

  /** The session this runtime drives. Another agent's file opened in place becomes the mend copy once continued. */
  get ref(): SessionRef {
    return this.currentRef;
  }

  get sessionId(): string {
    return this.currentSessionId;
  }

  get writable(): boolean {
    return this.lease !== null;
  }

  /**
   * The plan as last built (at open, or by the latest revalidation), without its histories
   * when the runtime was opened with `histories: 'on_demand'` (loadHistory reads them).
   */
  get recoveryPlan(): RecoveryPlanHead | null {
    return this.plan;
  }

  /** The loaded session as last built; without its records when the plan is (see recoveryPlan). */
  get loadedSession(): LoadedHead | null {
    return this.loaded;
  }

  /**
   * The current plan with its histories and the session with its records. A runtime
   * opened with `histories: 'on_demand'` reads them now, once (the whole session, as an
   * eager open does); the plan it then holds is the one read (equal to the one shown unless
   * the log changed since). Null when there is no plan (a new session).
   */
  async loadHistory(): Promise<{ plan: SessionRecoveryPlan; loaded: LoadedSession } | null> {
    const held = this.withHistories();
    if (held !== null || this.plan === null) return held;
    if (!(await this.deps.store.exists(this.ref))) return null;
    const { loaded, plan } = await loadAndPlan(this.deps.store, this.ref, this.settings.allowAutoContinue, this.lease ? null : this.activeWriter);
    this.loaded = loaded;
    this.plan = plan;
    return { loaded, plan };
  }

  /** The held plan and session when they carry their histories and records. */
  private withHistories(): { plan: SessionRecoveryPlan; loaded: LoadedSession } | null {
    const { plan, loaded } = this;
    if (plan === null || loaded === null || !('apiHistory' in plan) || !('records' in loaded.conversation)) return null;
    return { plan: plan as SessionRecoveryPlan, loaded: loaded as LoadedSession };
  }

  /** A turn is running, queued, or a continuation is being decided. */
  get busy(): boolean {
    return this.queue.busy;
  }

  /**
   * The label the front end gave the turn whose events are being emitted now
   * (a daemon's prompt id), or undefined. Turns run one at a time, so every event
   * a turn emits, its terminal one included, is emitted while its label is set.
   */
  get turnLabel(): string | undefined {
    return this.runningLabel;
  }

  /** The policy's answer for an intent on the current plan. Pure; nothing runs. */
  decide(intent: RunIntent): Decision {
    return decideRecoveryAction(this.plan, intent, { busy: this.busy });
  }

  /** The current plan: rebuilt from storage under the lease when a turn has run since. */
  async currentPlan(): Promise<{ plan: SessionRecoveryPlan; loaded: LoadedSession } | null> {
    if (!this.lease && this.resumed) await this.recheckHolder();
    // While a turn runs, the log's tail is half written by us: that is a running session,
    // never a crash. Its plan says so (the holder is this runtime's own lease).
    if (this.queue.running && this.lease) {
      if (!(await this.deps.store.exists(this.ref))) return this.loadHistory();
      return loadAndPlan(this.deps.store, this.ref, this.settings.allowAutoContinue, this.lease.holder);
    }
    return this.planForExecution();
  }

  /** The current plan as the one projection every front end shows (wire shapes derive from it). */
  async summary(): Promise<PlanSummary | null> {
    const current = await this.currentPlan();
    return current ? summarizePlan(current.plan, current.loaded.conversation) : null;
  }

  /**
   * Without the lease: asks the store who holds the session now. When that changed (the
   * holder died, or another took it) the plan is rebuilt with the new holder, read-only:
   * a session whose writer is gone is a crash to recover, not a running one.
   */
  private async recheckHolder(): Promise<void> {
    if (this.closed || this.queue.running) return;
    const holder = await this.deps.store.activeWriter(this.ref);
    if (sameHolder(holder, this.holder)) return;
    this.holder = holder;
    if (!(await this.deps.store.exists(this.ref))) return;
    const { loaded, plan } = await loadAndPlan(this.deps.store, this.ref, this.settings.allowAutoContinue, holder);
    this.loaded = loaded;
    this.plan = plan;
    this.planFresh = true;
    this.recoveryPending = plan.canContinue;
  }

  /**
   * Takes the writer lease now when this runtime may take it later (opened on demand, or
   * read-only because another process held it): null once held, else why not (that
   * holder is alive). A host that must refuse a request synchronously asks first.
   */
  async takeLease(): Promise<string | null> {
    if (this.lease) return null;
    if (!this.leaseOnDemand) return this.closed ? 'the session is closed' : 'the session was opened read-only';
    return this.takeLeaseOnDemand();
  }

  /** The plan a continuation executes: rebuilt from storage under the lease when a turn has run since. */
  private async planForExecution(): Promise<{ plan: SessionRecoveryPlan; loaded: LoadedSession } | null> {
    if (!this.planFresh && this.lease) {
      if (!(await this.deps.store.exists(this.ref))) return null;
      const { loaded, plan } = await loadAndPlan(this.deps.store, this.ref, this.settings.allowAutoContinue, null);
      this.loaded = loaded;
      this.plan = plan;
      this.planFresh = true;
    }
    return this.loadHistory();
  }

  subscribe(listener: (event: RuntimeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: RuntimeEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  // ---- settings -----------------------------------------------------------------------------

  setModel(model: string, by = 'host'): void {
    const from = this.settings.model;
    this.settings.model = model;
    // The provider is built lazily from the settings; the next turn's agent picks the new model up.
    this.modelChanged = true;
    if (from !== model) void this.recordSetting('model_changed', { from: from ?? null, to: model, by }, 'model change');
  }

  /**
   * Changes the approval mode. When the session is leased the change is recorded as a
   * system record (old and new mode, who changed it), so the log says under which mode
   * each tool ran. Returns once the record is written.
   */
  async setApprovalMode(mode: ApprovalMode, by = 'host'): Promise<void> {
    const from = this.settings.approvalMode;
    this.settings.approvalMode = mode;
    if (from === mode) return;
    await this.recordSetting('approval_mode_changed', { from, to: mode, by }, 'approval mode change');
  }

  /** A settings change as a system record, through the session's one append path (after whatever is being written). */
  private async recordSetting(subtype: string, payload: Record<string, unknown>, what: string): Promise<void> {
    const chain = this.recordChain();
    if (!chain) return;
    try {
      await chain.append(this.recordBuilder().system(subtype, payload), { durable: true });
    } catch (error) {
      // The setting did change; only its record is missing. Said, never thrown at a caller that cannot act on it.
      this.emit({ type: 'warning', code: 'record_failed', message: `the ${what} was not recorded: ${errorMessageOf(error)}` });
    }
  }

  private recordBuilder(): RecordBuilder {
    this.agentBuilder ??= new RecordBuilder(contextFor(this.sessionId, this.deps), this.loaded?.conversation.leafUuid ?? null);
    return this.agentBuilder;
  }

  private chain: RecordChain | null = null;

  /** The session's one ordered append path (record-chain.ts), once the lease is held. */
  private recordChain(): RecordChain | null {
    if (!this.lease) return null;
    this.chain ??= new RecordChain(this.lease, this.loaded?.conversation.leafUuid ?? null);
    return this.chain;
  }

  /** A host's system prompt (its initialize): undefined keeps what was there (the built-in one or --system-prompt). */
  setSystemPrompt(prompt: { replace?: string | undefined; append?: string | undefined }): void {
    if (prompt.replace !== undefined) this.settings.systemPrompt = prompt.replace;
    if (prompt.append !== undefined) this.settings.appendSystemPrompt = prompt.append;
  }

  /** More tools (or shell rules) never to offer or run, from now on (a host's initialize). */
  excludeTools(rules: readonly string[]): void {
    const current = this.settings.tools ?? {};
    this.settings.tools = { ...current, exclude: [...(current.exclude ?? []), ...rules] };
  }

  /** A person confirmed running prompts on a degraded history (--accept-degraded given later, as in the terminal UI). */
  setAcceptDegraded(accept: boolean): void {
    this.settings.acceptDegraded = accept;
  }

  private backpressure: (() => Promise<void> | undefined) | undefined;

  /** What the engine waits on between streamed events (a front end's output buffer draining). */
  setBackpressure(wait: () => Promise<void> | undefined): void {
    this.backpressure = wait;
  }

  /** Turns waiting to run (not counting the running one). */
  get queued(): number {
    return this.queue.waiting;
  }

  /** Resolves once fewer than `limit` turns wait (a front end stops reading input meanwhile). */
  whenQueueBelow(limit: number): Promise<void> {
    return this.queue.whenBelow(limit);
  }

  /** How tools that need approval are asked about; undefined: nobody can be asked (a refusal). */
  setApprovalHandler(ask: () => AskHost | undefined): void {
    this.askHost = ask;
  }

  // ---- turns --------------------------------------------------------------------------------

  /** Queues a prompt; resolves with its outcome (a refused one too: degraded history). */
  prompt(parts: Part[], label?: string): Promise<TurnOutcome> {
    return this.queue.add((stopped) => this.labelled(label, () => (stopped ? Promise.resolve(this.stoppedOutcome()) : this.runPrompt(parts))));
  }

  private async labelled<T>(label: string | undefined, job: () => Promise<T>): Promise<T> {
    this.runningLabel = label;
    try {
      return await job();
    } finally {
      this.runningLabel = undefined;
    }
  }

  /**
   * A prompt the front end could not accept (empty, malformed): refused in queue
   * order, so its outcome comes after the turns queued before it, like any other.
   */
  refusePrompt(code: string, message: string): Promise<TurnOutcome> {
    return this.queue.add(async () => {
      const outcome = refusedOutcome(code, message);
      this.emit({ type: 'turn_failed', outcome });
      return outcome;
    });
  }

  /** A queued prompt that never ran because mend is stopping: it still gets its outcome. */
  private stoppedOutcome(): TurnOutcome {
    const stop: unknown = this.deps.signal?.reason;
    const reason = turnAbortReasonOf(stop);
    const why = reason === 'interrupt' ? 'the session is closing' : `mend is stopping (${reason})`;
    const outcome: TurnOutcome = { ...refusedOutcome('aborted', `turn not started: ${why}`), status: 'aborted', abortReason: reason };
    this.emit({ type: 'turn_aborted', outcome });
    return outcome;
  }

  /**
   * Continues the interrupted turn. Decided and queued atomically: a continue while
   * a turn runs or waits is refused (`turn_running`), so exactly one continuation of
   * a tail can be accepted; the plan is rebuilt right before execution and the
   * policy decides on that one.
   */
  continueLastTurn(request: { planId?: string | undefined; auto?: boolean; unconfirmed?: boolean; label?: string } = {}): Promise<ContinueAnswer> {
    if (this.closed || (!this.lease && !this.leaseOnDemand)) {
      const holder = this.holder;
      return Promise.resolve({
        accepted: false,
        code: 'session_locked',
        message: holder ? `the session is in use by ${holder.host} pid ${holder.pid}` : 'the session was opened read-only',
        plan: this.plan,
      });
    }
    if (this.busy) return Promise.resolve({ accepted: false, code: 'turn_running', message: REFUSAL_MESSAGES.busy, plan: this.plan });
    return new Promise<ContinueAnswer>((answer) => {
      const done: Promise<TurnOutcome | null> = this.queue.add((stopped) =>
        this.labelled(request.label, async () => {
          if (stopped) {
            answer({ accepted: false, code: 'turn_running', message: 'mend is stopping', plan: this.plan });
            return null;
          }
          const locked = await this.takeLeaseOnDemand();
          if (locked) {
            answer({ accepted: false, code: 'session_locked', message: locked, plan: this.plan });
            return null;
          }
          const current = await this.planForExecution();
          // A host that saw another agent's file in place names that plan: it is this copy's.
          const planId = request.planId !== undefined && request.planId === this.importedSourcePlanId ? current?.plan.planId : request.planId;
          const intent: RunIntent = request.auto
            ? { type: 'auto_continue', planId }
            : { type: 'continue', planId, ...(request.unconfirmed ? { unconfirmed: true } : {}) };
          const decision = decideRecoveryAction(current?.plan ?? null, intent, { busy: false });
          if (decision.action === 'refused' || decision.action === 'nothing_to_do') {
            answer({ accepted: false, code: decision.code, message: decision.message, plan: current?.plan ?? null });
            return null;
          }
          if (decision.execute !== 'continuation' || !current) {
            // An auto-continue the policy leaves to a person.
            const message = 'message' in decision && decision.message ? decision.message : 'this tail needs a confirmation to continue';
            answer({ accepted: false, code: 'confirmation_required', message, plan: current?.plan ?? null });
            return null;
          }
          answer({ accepted: true, plan: current.plan, outcome: done.then((outcome) => outcome!) });
          return this.runContinuation(current.plan);
        }),
      );
      // A failure while deciding (the log unreadable, the store gone) keeps its own code.
      done.catch((error: unknown) => answer({ accepted: false, code: errorCodeOf(error), message: errorMessageOf(error), plan: this.plan }));
    });
  }

  /**
   * For a runtime opened `on_demand`: takes the writer lease before the first turn
   * and rebuilds the plan under it (the log may have changed since it was loaded).
   * Answers why not when another process holds the session; null when the lease is held.
   */
  private takeLeaseOnDemand(): Promise<string | null> {
    if (this.lease || !this.leaseOnDemand) return Promise.resolve(null);
    // One attempt at a time: two requests at once must not both acquire.
    this.leasing ??= this.acquireOnDemand().finally(() => {
      this.leasing = null;
    });
    return this.leasing;
  }

  private leasing: Promise<string | null> | null = null;

  private async acquireOnDemand(): Promise<string | null> {
    if (this.lease) return null;
    if (this.closed) return 'the session is closed';
    if (this.currentRef.foreign) {
      // Another agent's file opened in place: the first turn copies it into mend's store and works there.
      const imported = await importForeignSession(this.deps, this.currentRef);
      this.currentRef = imported.ref;
      this.currentSessionId = imported.sessionId;
      this.importedSourcePlanId = imported.sourcePlanId;
      this.lease = imported.lease;
      this.agentBuilder = null;
    } else {
      try {
        this.lease = await this.deps.store.acquire(this.ref, this.deps.identity);
      } catch (error) {
        if (isMendError(error, 'session_locked')) {
          this.holder = (await this.deps.store.activeWriter(this.ref).catch(() => null)) ?? this.holder;
          return error.message;
        }
        throw error;
      }
    }
    this.holder = null;
    try {
      const { loaded, plan } = await loadAndPlan(this.deps.store, this.currentRef, this.settings.allowAutoContinue, null);
      this.loaded = loaded;
      this.plan = plan;
      this.planFresh = true;
      this.recoveryPending = plan.canContinue;
    } catch (error) {
      await this.lease.release();
      this.lease = null;
      throw error;
    }
    return null;
  }

  /** Lets a tool run without asking for the rest of this runtime (an "always allow" answer). */
  allowTool(name: string): void {
    if (!this.settings.allowedTools.includes(name)) this.settings.allowedTools.push(name);
  }

  /** Stops the running turn (recorded as aborted); false when nothing runs. */
  interrupt(): boolean {
    return this.queue.interrupt('interrupt');
  }

  /**
   * Waits for queued work, then releases the lease. Nothing is written to the session after
   * it. The plan checkpoint's last refresh (a cache in mend's own folder) is waited for too,
   * unless `checkpoint: 'background'`: a host that lives on (the daemon closing one of many
   * sessions) lets it finish after the close answered; settledBackgroundCheckpoints() waits
   * for those.
   */
  async close(opts: { checkpoint?: 'wait' | 'background' } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.drain();
    this.queue.dispose();
    await this.chain?.settled();
    if (opts.checkpoint === 'background') trackBackground(this.settleCheckpoint());
    else await this.settleCheckpoint();
    await this.mcp.close();
    await this.lease?.release();
    this.lease = null;
  }

  private async runPrompt(parts: Part[]): Promise<TurnOutcome> {
    let refusal: { code: string; message: string } | undefined;
    try {
      const locked = await this.takeLeaseOnDemand();
      refusal = locked ? { code: 'session_locked', message: locked } : this.promptRefusal();
    } catch (error) {
      refusal = { code: errorCodeOf(error), message: errorMessageOf(error) };
    }
    if (refusal) {
      const outcome = refusedOutcome(refusal.code, refusal.message);
      this.emit({ type: 'turn_failed', outcome });
      return outcome;
    }
    return this.runTurn('prompt', async (agent, signal) => {
      const current = this.recoveryPending ? this.withHistories() : null;
      if (current !== null) await agent.recordRecoveryStart(current.plan);
      this.recoveryPending = false;
      return agent.runPrompt(parts, { signal, maxTurns: this.settings.maxTurns });
    });
  }

  private runContinuation(plan: SessionRecoveryPlan): Promise<TurnOutcome> {
    this.emit({ type: 'recovery_plan', plan });
    return this.runTurn('continuation', (agent, signal) => agent.runContinuation(plan, { signal, maxTurns: this.settings.maxTurns }));
  }

  private promptRefusal(): { code: RefusalCode; message: string } | undefined {
    // Appending never mends a broken chain: the refusal holds for every prompt of this runtime.
    if (this.plan?.kind === 'degraded_history' && !this.settings.acceptDegraded) {
      const decision = decideRecoveryAction(this.plan, { type: 'prompt', acceptDegraded: false });
      return decision.action === 'refused' ? { code: decision.code, message: decision.message } : undefined;
    }
    return undefined;
  }

  private async runTurn(trigger: 'prompt' | 'continuation', body: (agent: AgentSession, signal: AbortSignal) => Promise<TurnOutcome>): Promise<TurnOutcome> {
    const started = this.deps.clock();
    this.emit({ type: 'turn_started', trigger });
    let outcome: TurnOutcome;
    try {
      // A turn offers the tools of every server that is up: it waits for those still connecting (each bounded).
      await this.mcp.settled();
      const agent = this.agentForTurn();
      outcome = await body(agent, this.queue.signal());
    } catch (error) {
      outcome = refusedOutcome(errorCodeOf(error), errorMessageOf(error), Math.round(this.deps.clock() - started));
    } finally {
      this.recoveryPending = false;
      this.planFresh = false;
    }
    this.emit(
      outcome.status === 'success'
        ? { type: 'turn_finished', outcome }
        : outcome.status === 'aborted'
          ? { type: 'turn_aborted', outcome }
          : { type: 'turn_failed', outcome },
    );
    this.refreshCheckpoint();
    return outcome;
  }

  private checkpointRefresh: Promise<void> | null = null;
  private checkpointStale = false;
  private checkpointTimer: NodeJS.Timeout | null = null;
  /** When the next refresh may start: refreshes take at most 1/REFRESH_DUTY of the time. */
  private checkpointNextAt = 0;

  /**
   * The plan checkpoint catches up with what the turn appended, after the turn and off its
   * path (a later resume then reads only what comes after): one refresh at a time, again
   * when turns ended meanwhile, and never more than 1/REFRESH_DUTY of the wall time (a
   * session of quick turns refreshes every few turns). A cache: nothing waits for it but close.
   */
  private refreshCheckpoint(): void {
    if (!this.deps.store.checkpointSlot?.(this.currentRef)) return;
    this.checkpointStale = true;
    if (this.checkpointRefresh !== null || this.checkpointTimer !== null) return;
    const wait = this.checkpointNextAt - Date.now();
    if (wait > 0) {
      this.checkpointTimer = setTimeout(() => {
        this.checkpointTimer = null;
        this.startRefresh();
      }, wait);
      this.checkpointTimer.unref();
      return;
    }
    this.startRefresh();
  }

  private startRefresh(): void {
    const ref = this.currentRef;
    this.checkpointRefresh = (async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.checkpointStale = false;
      const started = Date.now();
      await refreshPlanCheckpoint(this.deps.store, ref);
      this.checkpointNextAt = Date.now() + REFRESH_DUTY * (Date.now() - started);
    })().finally(() => {
      this.checkpointRefresh = null;
      if (this.checkpointStale && !this.closed) this.refreshCheckpoint();
    });
  }

  /** At close: a refresh that waits for its turn runs now; the one running is waited for. */
  private async settleCheckpoint(): Promise<void> {
    await this.checkpointRefresh;
    if (this.checkpointTimer !== null) {
      clearTimeout(this.checkpointTimer);
      this.checkpointTimer = null;
    }
    if (this.checkpointStale) {
      this.checkpointStale = false;
      await refreshPlanCheckpoint(this.deps.store, this.currentRef);
    }
  }

  private agentForTurn(): AgentSession {
    const lease = this.recordChain();
    if (!lease) throw new MendError('internal', 'a run that writes needs the writer lease');
    if (this.agent && !this.modelChanged) return this.agent;
    // A leased runtime's plan carries its histories: it was loaded whole under the lease.
    const history = this.agent ? this.agent.history : structuredClone(this.withHistories()?.plan.apiHistory ?? []);
    const builder = this.recordBuilder();
    const mcpTools = this.mcp;
    const gate: ApprovalGate = approvalGate(this.settings, () => this.askHost(), mcpTools);
    this.agent = new AgentSession({
      sessionId: this.sessionId,
      history,
      builder,
      sink: lease,
      provider: this.deps.provider(this.settings.model),
      tools: this.deps.tools ?? createToolPort(this.deps.cwd, this.deps.toolSession, () => this.settings.tools, undefined, mcpTools),
      systemPrompt: () => this.systemPrompt(),
      backpressure: () => this.backpressure?.(),
      approve: async (call, signal) => {
        this.emit({ type: 'tool_approval_requested', call });
        const decision = await gate(call, signal);
        // A deny that asks to stop the turn: the engine records the denial, then the abort.
        if (!decision.allow && decision.interrupt) this.queue.interrupt('interrupt');
        return decision;
      },
      emit: (event) => this.emit(event),
      fence: () => this.lease?.verify() ?? Promise.reject(new MendError('session_lease_lost', 'the writer lease was released')),
      newId: this.deps.newId,
      now: this.deps.now,
      clock: this.deps.clock,
    });
    this.modelChanged = false;
    return this.agent;
  }

  private agentBuilder: RecordBuilder | null = null;

  /** The system prompt sent with every request: the host's replacement or the built-in one, plus any addition. */
  systemPrompt(): string | undefined {
    const base = this.settings.systemPrompt ?? this.deps.baseSystemPrompt?.();
    const extra = this.settings.appendSystemPrompt;
    if (!extra) return base;
    return base ? `${base}\n\n${extra}` : extra;
  }

  /** Checks the model settings now (before anything is written): a configuration error comes first. */
  async checkProvider(): Promise<void> {
    await this.deps.provider(this.settings.model)();
  }
}
