/**
 * One session open in the daemon: its SessionRuntime (the one writer of the
 * session in this process), the journal every attached client reads, the
 * clients attached to it, and the permission requests waiting for any of them
 * (the first answer wins). Runtime events become Qwen-shaped events here, each
 * carrying the stream-json messages a process-backed run prints for the same
 * step under `_meta.mend.messages`.
 */
import { MendError } from '../../errors.js';
import type { ApprovalDecision } from '../../engine/agent-session.js';
import type { TurnOutcome } from '../../engine/engine-events.js';
import type { RuntimeEvent, SessionRuntime } from '../../runtime/session-runtime.js';
import type { AskHost } from '../../runtime/tool-port.js';
import type { McpServerStatus } from '../../tools/mcp/mcp-hub.js';
import type { Part } from '../../session/records.js';
import { APPROVAL_MODE_DESCRIPTIONS, APPROVAL_MODES } from '../../wire/approval-modes.js';
import { PERMISSION_OPTIONS, type DaemonContinueAnswer, type PermissionBody, type SessionState } from '../../wire/daemon-api.js';
import type { DaemonEvent, SESSION_CLOSE_REASONS } from '../../wire/daemon-events.js';
import { liveUpdates, replayUpdates, stopReasonOf, toolCallFields } from '../shared/acp-updates.js';
import { camelSummary, snakeSummary } from '../shared/recovery-summary.js';
import { WireEventMapper, outcomeFields, resultMessage } from '../shared/wire-messages.js';
import type { RecoverySummaryCamel } from '../../wire/recovery-summary.js';
import type { RecoverySummary } from '../../wire/messages.js';
import { initMessage, recoveryLine, type InitHost } from '../shared/session-lines.js';
import { EventJournal, type EventInput, type JournalLimits } from './event-journal.js';

export interface DaemonSessionDeps extends InitHost {
  now: () => string;
  journal: JournalLimits;
  maxPendingPrompts: number;
  /** 0: wait for an answer as long as the turn runs. */
  permissionTimeoutMs: number;
  log: (line: string) => void;
}

type Interruption = 'none' | 'interrupted_prompt' | 'interrupted_turn';

function interruptionOf(kind: string | undefined): Interruption {
  return kind === 'interrupted_prompt' || kind === 'interrupted_turn' ? kind : 'none';
}

export class DaemonSession {
  readonly journal: EventJournal;
  readonly createdAt: string;
  private readonly clients = new Map<string, { lastSeenAt: string }>();
  private readonly permissions = new Map<
    string,
    (outcome: PermissionBody['outcome'], meta?: { updatedInput?: Record<string, unknown> | undefined; message?: string | undefined }) => void
  >();
  /** Prompts and accepted continuations that have not ended yet, by prompt id, with the client that sent them. */
  private readonly outstanding = new Map<string, string | undefined>();
  private readonly wire: WireEventMapper;
  private closing: Promise<void> | null = null;

  constructor(
    readonly runtime: SessionRuntime,
    /** The session's project folder (its cwd). */
    readonly workspaceCwd: string,
    /** Ends this session's turns (DELETE); the process-wide stop is part of the runtime's own signal. */
    private readonly stop: AbortController,
    private readonly deps: DaemonSessionDeps,
  ) {
    this.createdAt = deps.now();
    this.journal = new EventJournal(deps.runtime.newId(), deps.journal);
    this.wire = new WireEventMapper(runtime.sessionId, deps.runtime.newId, false);
    runtime.setApprovalHandler(() => this.ask);
    runtime.subscribe((event) => this.onRuntimeEvent(event));
  }

  get sessionId(): string {
    return this.runtime.sessionId;
  }

  get closed(): boolean {
    return this.closing !== null;
  }

  get hasActivePrompt(): boolean {
    return this.runtime.busy;
  }

  // ---- MCP servers --------------------------------------------------------------------------

  /** Each MCP server of the session and its status (`pending`, `connected`, `failed` with the reason). */
  mcpServers(): McpServerStatus[] {
    return this.runtime.mcpServerStatuses();
  }

  /** Resolves once no server is still connecting, or after `waitMs`, whichever comes first. */
  async mcpSettled(waitMs: number): Promise<void> {
    if (!this.mcpServers().some((s) => s.status === 'pending')) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.runtime.mcpSettled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  // ---- clients ------------------------------------------------------------------------------

  /** A client attaches (create, load, resume): it gets an id to send back on session calls. */
  attach(): string {
    const clientId = this.deps.runtime.newId();
    this.clients.set(clientId, { lastSeenAt: this.deps.now() });
    return clientId;
  }

  knowsClient(clientId: string): boolean {
    return this.clients.has(clientId);
  }

  heartbeat(clientId: string | undefined): { sessionId: string; clientId?: string; lastSeenAt: string } {
    const lastSeenAt = this.deps.now();
    if (clientId !== undefined) this.clients.set(clientId, { lastSeenAt });
    return { sessionId: this.sessionId, ...(clientId !== undefined ? { clientId } : {}), lastSeenAt };
  }

  // ---- what a client sees -------------------------------------------------------------------

  /** The current plan's summaries (rebuilt from storage when a turn ran since); null for a session without records. */
  async recovery(): Promise<{ camel: RecoverySummaryCamel; snake: RecoverySummary } | null> {
    // The runtime's summary: rebuilt from storage when a turn ran since, with the holder it re-checked.
    const summary = await this.runtime.summary();
    return summary ? { camel: camelSummary(summary), snake: snakeSummary(summary) } : null;
  }

  /** The ACP load answer: modes, models, and mend's recovery summary and first stream-json lines under `_meta.mend`. */
  async state(): Promise<{ state: SessionState; recovery: RecoverySummaryCamel | null }> {
    const recovery = (await this.recovery())?.camel ?? null;
    const { settings } = this.runtime;
    const init = initMessage(this.runtime, this.deps);
    const line = recoveryLine(this.runtime, this.runtime.decide({ type: 'serve' }), this.deps.runtime.newId);
    const model = this.deps.modelName(settings.model);
    return {
      recovery,
      state: {
        modes: {
          currentModeId: settings.approvalMode,
          availableModes: APPROVAL_MODES.map((id) => ({ id, name: id, description: APPROVAL_MODE_DESCRIPTIONS[id] })),
        },
        models: { currentModelId: model, availableModels: model === null ? [] : [{ modelId: model, name: model }] },
        configOptions: [],
        _meta: { mend: { recovery, messages: line ? [init, line] : [init] } },
      },
    };
  }

  /** The conversation as `session_update` events (a load's `compactedReplay`); not journaled. */
  async replay(): Promise<DaemonEvent[]> {
    const current = await this.runtime.currentPlan();
    if (!current) return [];
    return replayUpdates(current.loaded.conversation).map((update) => ({ v: 1 as const, type: 'session_update', data: { sessionId: this.sessionId, update } }));
  }

  // ---- turns --------------------------------------------------------------------------------

  private requireOpen(): void {
    if (this.closing) throw new MendError('session_not_found', `session ${this.sessionId} is closing`);
  }

  /** The lease, taken now if another process held it and has gone; session_locked (409) while a live one holds it. */
  private async requireWriter(): Promise<void> {
    const locked = await this.runtime.takeLease();
    if (locked !== null) throw new MendError('session_locked', locked, this.runtime.activeWriter ? { ...this.runtime.activeWriter } : undefined);
  }

  /** Queues a prompt; its events and its one terminal event follow on the journal under the prompt id. */
  async prompt(parts: Part[], clientId: string | undefined): Promise<{ promptId: string; lastEventId: number; eventEpoch: string }> {
    this.requireOpen();
    if (parts.length === 0) throw new MendError('invalid_request', 'the prompt has no content (no blocks, or only empty text)');
    await this.requireWriter();
    if (this.outstanding.size >= this.deps.maxPendingPrompts) {
      throw new MendError(
        'prompt_queue_full',
        `session ${this.sessionId} has ${this.outstanding.size} prompts waiting (limit ${this.deps.maxPendingPrompts})`,
        {
          sessionId: this.sessionId,
          limit: this.deps.maxPendingPrompts,
          pendingCount: this.outstanding.size,
        },
      );
    }
    const promptId = this.deps.runtime.newId();
    const lastEventId = this.journal.lastId;
    this.outstanding.set(promptId, clientId);
    void this.runtime.prompt(parts, promptId);
    return { promptId, lastEventId, eventEpoch: this.journal.epoch };
  }

  /**
   * `/continue`: the shared policy decides on the plan rebuilt right before
   * execution. Without a plan id the continue is unconfirmed: it never repeats a
   * tail that already failed a recovery attempt.
   */
  async continue(planId: string | undefined, clientId: string | undefined): Promise<DaemonContinueAnswer> {
    this.requireOpen();
    const promptId = this.deps.runtime.newId();
    const lastEventId = this.journal.lastId;
    this.outstanding.set(promptId, clientId);
    const answer = await this.runtime.continueLastTurn({ planId, unconfirmed: planId === undefined, label: promptId });
    if (!answer.accepted) {
      this.outstanding.delete(promptId);
      return {
        accepted: false,
        code: answer.code,
        message: answer.message,
        interruption: interruptionOf(answer.plan?.kind),
        planId: answer.plan?.planId ?? null,
        kind: answer.plan?.kind ?? null,
      };
    }
    const { plan } = answer;
    return {
      accepted: true,
      interruption: interruptionOf(plan.kind),
      promptId,
      planId: plan.planId,
      kind: plan.kind,
      previousAttempts: plan.previousAttempts,
      lastEventId,
      eventEpoch: this.journal.epoch,
    };
  }

  /** Stops the running turn (recorded as aborted); false when none runs. */
  cancel(): boolean {
    const promptId = this.runtime.turnLabel;
    const interrupted = this.runtime.interrupt();
    if (interrupted) this.emit('prompt_cancelled', { sessionId: this.sessionId, reason: 'cancel_requested', ...(promptId ? { promptId } : {}) }, promptId);
    return interrupted;
  }

  setModel(modelId: string): void {
    this.requireOpen();
    this.runtime.setModel(modelId);
  }

  // ---- permissions --------------------------------------------------------------------------

  hasPermissionRequest(requestId: string): boolean {
    return this.permissions.has(requestId);
  }

  /** A client's answer; false when no such request is waiting (answered already: the first answer won). */
  answerPermission(requestId: string, body: PermissionBody): boolean {
    const settle = this.permissions.get(requestId);
    if (!settle) return false;
    const { outcome } = body;
    if (outcome.outcome === 'selected' && !PERMISSION_OPTIONS.some((o) => o.optionId === outcome.optionId)) {
      throw new MendError(
        'invalid_request',
        `option ${JSON.stringify(outcome.optionId)} was not offered; offered: ${PERMISSION_OPTIONS.map((o) => o.optionId).join(', ')}`,
      );
    }
    settle(outcome, body._meta?.mend);
    return true;
  }

  private readonly ask: AskHost = (call, signal) =>
    new Promise<ApprovalDecision>((resolve) => {
      const requestId = this.deps.runtime.newId();
      const promptId = this.runtime.turnLabel;
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => settle({ outcome: 'cancelled' }, { message: 'the turn was aborted while waiting for approval' });
      const settle = (outcome: PermissionBody['outcome'], meta?: { updatedInput?: Record<string, unknown> | undefined; message?: string | undefined }) => {
        if (!this.permissions.delete(requestId)) return;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.emit('permission_resolved', { requestId, sessionId: this.sessionId, outcome }, promptId);
        resolve(this.decision(call.name, outcome, meta));
      };
      this.permissions.set(requestId, settle);
      signal.addEventListener('abort', onAbort, { once: true });
      const timeoutMs = this.deps.permissionTimeoutMs;
      if (timeoutMs > 0) timer = setTimeout(() => settle({ outcome: 'cancelled' }, { message: `no answer within ${timeoutMs} ms` }), timeoutMs);
      this.emit(
        'permission_request',
        {
          requestId,
          sessionId: this.sessionId,
          toolCall: { ...toolCallFields(call), status: 'pending', _meta: { toolName: call.name } },
          options: PERMISSION_OPTIONS.map((o) => ({ ...o })),
        },
        promptId,
        // What the process-backed SDK gets from the CLI for the same question.
        [
          {
            type: 'control_request',
            request_id: requestId,
            request: { subtype: 'can_use_tool', tool_name: call.name, tool_use_id: call.id, input: call.args },
          },
        ],
      );
      if (signal.aborted) onAbort();
    });

  private decision(
    toolName: string,
    outcome: PermissionBody['outcome'],
    meta?: { updatedInput?: Record<string, unknown> | undefined; message?: string | undefined },
  ): ApprovalDecision {
    if (outcome.outcome === 'selected' && outcome.optionId !== 'cancel') {
      if (outcome.optionId === 'proceed_always') this.runtime.allowTool(toolName);
      return meta?.updatedInput ? { allow: true, args: meta.updatedInput } : { allow: true };
    }
    const why = meta?.message ? `: ${meta.message}` : outcome.outcome === 'cancelled' ? ': the request was cancelled' : '';
    return { allow: false, message: `Permission denied by the client for ${toolName}${why}` };
  }

  // ---- events -------------------------------------------------------------------------------

  private emit(type: string, data: Record<string, unknown>, promptId?: string, messages?: ReadonlyArray<Record<string, unknown>>): void {
    const event: EventInput = { type, data };
    if (promptId) {
      event.promptId = promptId;
      const originator = this.outstanding.get(promptId);
      if (originator) event.originatorClientId = originator;
    }
    if (messages && messages.length > 0) event._meta = { mend: { messages: messages as Array<{ type: string }> } };
    this.journal.append(event);
  }

  private onRuntimeEvent(event: RuntimeEvent): void {
    const promptId = this.runtime.turnLabel;
    if (event.type === 'turn_finished' || event.type === 'turn_failed' || event.type === 'turn_aborted') {
      this.terminal(event.outcome, promptId);
      return;
    }
    if (event.type === 'warning') {
      this.deps.log(`session ${this.sessionId}: warning [${event.code}] ${event.message}`);
      return;
    }
    const updates = liveUpdates(event, { echoPrompts: true });
    const messages = this.wire.map(event);
    if (updates.length === 0 && messages.length === 0) return;
    if (updates.length === 0) updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '' } });
    updates.forEach((update, i) =>
      this.emit('session_update', { sessionId: this.sessionId, update }, promptId, i === updates.length - 1 ? messages : undefined),
    );
  }

  /** The one event that ends a turn, with the `result` line a process-backed run prints for it. */
  private terminal(outcome: TurnOutcome, promptId: string | undefined): void {
    const result = resultMessage(this.sessionId, this.deps.runtime.newId, outcomeFields(outcome));
    const base = { sessionId: this.sessionId, ...(promptId ? { promptId } : {}) };
    if (outcome.status === 'error') {
      this.emit('turn_error', { ...base, message: outcome.error?.message ?? 'the turn failed', code: outcome.error?.code ?? 'internal' }, promptId, [result]);
    } else {
      const stopReason = stopReasonOf(outcome);
      const extra =
        outcome.status === 'aborted'
          ? { abortReason: outcome.abortReason, promptCancelled: { ...(promptId ? { promptId } : {}), elapsedMs: outcome.durationMs, cancelledAt: Date.now() } }
          : {};
      this.emit('turn_complete', { ...base, stopReason, ...extra }, promptId, [result]);
    }
    if (promptId) this.outstanding.delete(promptId);
  }

  // ---- closing ------------------------------------------------------------------------------

  /**
   * Ends the session: a DELETE stops its turns (recorded as aborted); on server
   * shutdown the process-wide stop already did. Waits for the runtime to finish
   * (the lease is released), then tells the clients and ends their streams. The plan
   * checkpoint's last refresh (a cache) does not hold up the answer; serve waits for it
   * before the daemon exits.
   */
  close(reason: (typeof SESSION_CLOSE_REASONS)[number]): Promise<void> {
    this.closing ??= (async () => {
      if (reason === 'client_close') this.stop.abort('interrupt');
      try {
        await this.runtime.close({ checkpoint: 'background' });
      } finally {
        this.emit('session_closed', { sessionId: this.sessionId, reason, ...(reason === 'server_shutdown' ? { exitCode: 0 } : {}) });
        this.journal.close();
      }
    })();
    return this.closing;
  }
}
