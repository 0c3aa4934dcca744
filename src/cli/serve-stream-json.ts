/**
 * `--input-format stream-json`: after `init` (and `recovery` when resumed) mend
 * reads ndjson from stdin. Control requests are answered at once, also while a
 * turn runs; user messages queue and run one turn at a time; every turn ends
 * with exactly one `result`. A bad line is reported and reading goes on.
 */
import { existsSync } from 'node:fs';
import { MendError, isMendError } from '../errors.js';
import type { AgentSession, TurnOptions, TurnResult } from '../engine/agent-session.js';
import { toRecoverySummary } from '../engine/recovery-summary.js';
import type { SessionRecoveryPlan } from '../recovery/plan-types.js';
import type { Part } from '../session/records.js';
import { ControlCancelRequestSchema, ControlRequestEnvelopeSchema, ControlResponseMessageSchema, HostControlRequestSchema, InputUserMessageSchema, type ContinueLastTurnAnswer, type HostControlRequest } from '../stream/control.js';
import { LineFramer, type FramedLine } from '../stream/line-framer.js';
import type { RecoverySummary } from '../stream/messages.js';
import type { ApprovalMode, RunOptions } from './args.js';
import { ExitCode } from './exit-codes.js';
import { loadAndPlan, type OpenedSession } from './open-session.js';
import type { OutputSink } from './output-sink.js';
import type { Decision } from './recovery-decision.js';
import { CAPABILITIES, createAgent, errorFields, resultMessage, type RunIo } from './run-command.js';
import { HostApprovals } from './host-approvals.js';
import { approvalGate } from './tool-port.js';

type Job = { kind: 'prompt'; parts: Part[] } | { kind: 'continuation'; plan: SessionRecoveryPlan } | { kind: 'refused'; code: string; reason: string };

function userParts(content: string | ReadonlyArray<Record<string, unknown>>): Part[] {
  if (typeof content === 'string') return [{ text: content }];
  const parts: Part[] = [];
  for (const block of content) {
    if (block['type'] === 'text' && typeof block['text'] === 'string') parts.push({ text: block['text'] });
  }
  return parts;
}

export class StreamJsonServer {
  private readonly options: RunOptions;
  private agent: AgentSession;
  private plan: SessionRecoveryPlan | null;
  /** Whether the startup plan still describes the log (no turn has run since it was built). */
  private planFresh = true;
  /** The startup plan's pending continuation is consumed by the first prompt or continuation. */
  private recoveryPending: boolean;
  private hostInitialized = false;
  private readonly jobs: Job[] = [];
  private running: { controller: AbortController } | null = null;
  private pumping: Promise<void> | null = null;
  private readonly approvals: HostApprovals;
  private lastExit: number = ExitCode.success;
  private modelChanged = false;

  constructor(
    options: RunOptions,
    private readonly io: RunIo,
    private readonly out: OutputSink,
    private readonly opened: OpenedSession,
  ) {
    this.options = { ...options, allowedTools: [...options.allowedTools] };
    this.plan = opened.plan;
    this.recoveryPending = opened.plan?.canContinue === true;
    this.approvals = new HostApprovals((m) => out.emit(m), () => this.options.permissionTimeoutMs);
    this.agent = this.makeAgent();
  }

  private makeAgent(): AgentSession {
    return createAgent(this.opened, this.options, this.io, this.out, approvalGate(this.options, () => (this.hostInitialized ? this.approvals.ask : undefined)));
  }

  /** Acts on --continue-interrupted / --auto-continue given on the command line. */
  startWith(decision: Decision): void {
    if (decision.action === 'refused') this.enqueue({ kind: 'refused', code: decision.code, reason: decision.reason });
    else if (decision.action === 'continue' && decision.execute === 'continuation' && this.plan) this.enqueue({ kind: 'continuation', plan: this.plan });
  }

  async serve(): Promise<number> {
    const framer = new LineFramer();
    const onSignal = () => {
      this.running?.controller.abort(this.io.signal.reason);
      // A signal ends the session: stop waiting for input that may never come.
      this.io.stdin.destroy();
    };
    this.io.signal.addEventListener('abort', onSignal, { once: true });
    try {
      for await (const chunk of this.io.stdin) {
        for (const line of framer.push(chunk as Buffer)) this.handleLine(line);
        if (this.io.signal.aborted) break;
      }
      for (const line of framer.end()) this.handleLine(line);
    } catch (error) {
      // Destroying stdin on a signal ends the read loop with an error; that is not worth a line.
      if (!this.io.signal.aborted) this.systemError('stdin_error', `reading stdin failed: ${(error as Error).message}`);
    }
    // End of input: nobody can answer a pending approval any more; finish the turns, then stop.
    this.approvals.close();
    while (this.pumping) await this.pumping;
    this.io.signal.removeEventListener('abort', onSignal);
    if (this.io.signal.aborted) return this.io.signal.reason === 'sigterm' ? ExitCode.sigterm : ExitCode.sigint;
    return this.lastExit === ExitCode.storage ? ExitCode.storage : ExitCode.success;
  }

  // ---- input ---------------------------------------------------------------------------

  private handleLine(line: FramedLine): void {
    if (!line.ok) return this.systemError(line.code, line.message, line.line);
    const value = line.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return this.systemError('invalid_message', `line ${line.line}: expected a JSON object`, line.line);
    }
    const type = (value as { type?: unknown }).type;
    if (typeof type !== 'string') return this.systemError('missing_type', `line ${line.line}: message has no "type"`, line.line);

    switch (type) {
      case 'user': {
        const parsed = InputUserMessageSchema.safeParse(value);
        if (!parsed.success) return this.systemError('invalid_message', `line ${line.line}: invalid user message: ${parsed.error.issues[0]?.message ?? ''}`, line.line);
        const parts = userParts(parsed.data.message.content as string | Array<Record<string, unknown>>);
        if (parts.length === 0) return this.systemError('invalid_message', `line ${line.line}: user message has no text`, line.line);
        this.enqueue({ kind: 'prompt', parts });
        return;
      }
      case 'control_request': {
        const envelope = ControlRequestEnvelopeSchema.safeParse(value);
        if (!envelope.success) return this.systemError('invalid_control_request', `line ${line.line}: control_request needs request_id and request.subtype`, line.line);
        void this.handleControl(envelope.data.request_id, envelope.data.request);
        return;
      }
      case 'control_response': {
        const parsed = ControlResponseMessageSchema.safeParse(value);
        if (!parsed.success || !this.approvals.settle(parsed.data.response.request_id, parsed.data.response)) {
          return this.systemError('unknown_request_id', `line ${line.line}: control_response for no pending request`, line.line);
        }
        return;
      }
      case 'control_cancel_request': {
        const parsed = ControlCancelRequestSchema.safeParse(value);
        // Requests from the host are answered at once, so only our own outgoing ones can be pending.
        if (!parsed.success || !this.approvals.settle(parsed.data.request_id, { subtype: 'error', error: 'cancelled by the host' })) {
          return this.systemError('unknown_request_id', `line ${line.line}: nothing pending to cancel`, line.line);
        }
        return;
      }
      default:
        return this.systemError('unknown_type', `line ${line.line}: unknown message type ${JSON.stringify(type)}`, line.line);
    }
  }

  private systemError(code: string, message: string, line?: number): void {
    this.out.emit({
      type: 'system',
      subtype: 'error',
      uuid: this.io.session.newId(),
      session_id: this.opened.sessionId,
      error: line === undefined ? { code, message } : { code, message, line },
    });
  }

  private respond(requestId: string, answer: { ok: true; response: Record<string, unknown> } | { ok: false; code: string; error: string }): void {
    this.out.emit({
      type: 'control_response',
      response: answer.ok
        ? { subtype: 'success', request_id: requestId, response: answer.response }
        : { subtype: 'error', request_id: requestId, error: answer.error, code: answer.code },
    });
  }

  private async handleControl(requestId: string, raw: { subtype: string }): Promise<void> {
    const parsed = HostControlRequestSchema.safeParse(raw);
    if (!parsed.success) {
      const known = ['initialize', 'interrupt', 'set_permission_mode', 'set_model', 'continue_last_turn', 'get_recovery_plan'].includes(raw.subtype);
      return this.respond(requestId, {
        ok: false,
        code: known ? 'invalid_request' : 'unknown_subtype',
        error: known ? `invalid ${raw.subtype} request: ${parsed.error.issues[0]?.message ?? ''}` : `unknown control subtype ${JSON.stringify(raw.subtype)}`,
      });
    }
    try {
      this.respond(requestId, { ok: true, response: await this.control(parsed.data) });
    } catch (error) {
      this.respond(requestId, { ok: false, code: isMendError(error) ? error.code : 'internal', error: error instanceof Error ? error.message : String(error) });
    }
  }

  private async control(request: HostControlRequest): Promise<Record<string, unknown>> {
    switch (request.subtype) {
      case 'initialize':
        this.hostInitialized = true;
        return { capabilities: { ...CAPABILITIES }, session_id: this.opened.sessionId, recovery: this.opened.resumed ? await this.currentSummary() : null };
      case 'interrupt': {
        const running = this.running;
        running?.controller.abort('interrupt');
        return { interrupted: running !== null };
      }
      case 'set_permission_mode':
        this.options.approvalMode = request.mode as ApprovalMode;
        return { mode: request.mode };
      case 'set_model':
        this.options.model = request.model;
        // The provider is built lazily from the options; the next turn's agent picks up the new model.
        this.modelChanged = true;
        return { model: request.model };
      case 'get_recovery_plan': {
        const summary = await this.currentSummary();
        if (!summary) throw new MendError('session_not_found', 'this session has no records yet');
        return summary;
      }
      case 'continue_last_turn':
        return this.continueLastTurn(request.plan_id);
    }
  }

  private rebuildAgent(): AgentSession {
    const history = this.agent.history;
    const agent = this.makeAgent();
    agent.history = history;
    return agent;
  }

  // ---- recovery ------------------------------------------------------------------------

  /** Rebuilds the plan from the log (we hold the lock) unless the cached one is still true. */
  private async refreshPlan(): Promise<SessionRecoveryPlan | null> {
    if (this.planFresh && this.plan) return this.plan;
    if (!existsSync(this.opened.logPath)) return null;
    const { loaded, plan } = await loadAndPlan(this.opened.logPath, this.opened.sessionId, this.options.autoContinue);
    this.opened.loaded = loaded;
    this.plan = plan;
    this.planFresh = true;
    return plan;
  }

  private async currentSummary(): Promise<RecoverySummary | null> {
    const plan = await this.refreshPlan();
    return plan && this.opened.loaded ? toRecoverySummary(plan, this.opened.loaded.conversation) : null;
  }

  private async continueLastTurn(planId: string | undefined): Promise<ContinueLastTurnAnswer> {
    const busy = this.running !== null || this.jobs.length > 0;
    // Rebuilt right before execution: the answer and the run use the same plan.
    const plan = busy ? this.plan : await this.refreshPlan();
    const base = {
      plan_id: plan?.planId ?? '',
      kind: plan?.kind ?? ('clean' as const),
      interruption: plan && (plan.kind === 'interrupted_prompt' || plan.kind === 'interrupted_turn') ? plan.kind : ('none' as const),
    };
    const refuse = (reason: string): ContinueLastTurnAnswer => ({ accepted: false, ...base, reason });
    if (busy) return refuse('a turn is running; wait for its result');
    if (!plan) return refuse('nothing to continue: the session has no records');
    if (planId !== undefined && planId !== plan.planId) return refuse(`stale_plan: plan ${planId} is stale, the current plan is ${plan.planId}`);
    if (plan.kind === 'degraded_history') return refuse('degraded_history: a degraded history is never continued');
    if (!plan.canContinue) return refuse('nothing to continue: the session is clean');
    this.enqueue({ kind: 'continuation', plan });
    return { accepted: true, ...base };
  }

  // ---- turns ---------------------------------------------------------------------------

  private enqueue(job: Job): void {
    this.jobs.push(job);
    this.pumping ??= this.pump().finally(() => {
      this.pumping = null;
    });
  }

  private async pump(): Promise<void> {
    for (let job = this.jobs.shift(); job; job = this.jobs.shift()) {
      if (this.io.signal.aborted) return;
      await this.runJob(job);
    }
  }

  private async runJob(job: Job): Promise<void> {
    const started = this.io.clock();
    if (job.kind === 'refused') {
      this.out.result(resultMessage(this.opened.sessionId, this.io.session.newId, errorFields(job.code, job.reason)));
      return;
    }
    if (this.modelChanged) {
      this.agent = this.rebuildAgent();
      this.modelChanged = false;
    }
    const controller = new AbortController();
    this.running = { controller };
    const signal = AbortSignal.any([controller.signal, this.io.signal]);
    const turnOptions: TurnOptions = { signal, maxTurns: this.options.maxTurns, includePartialMessages: this.options.includePartialMessages };
    try {
      let turn: TurnResult;
      if (job.kind === 'continuation') {
        turn = await this.agent.runContinuation(job.plan, turnOptions);
      } else {
        const refusal = this.promptRefusal();
        if (refusal) {
          this.out.result(resultMessage(this.opened.sessionId, this.io.session.newId, errorFields('degraded_history', refusal)));
          return;
        }
        if (this.recoveryPending && this.plan) await this.agent.recordRecoveryStart(this.plan);
        turn = await this.agent.runPrompt(job.parts, turnOptions);
      }
      const { aborted: _aborted, ...fields } = turn;
      this.out.result(resultMessage(this.opened.sessionId, this.io.session.newId, fields));
    } catch (error) {
      const code = isMendError(error) ? error.code : 'internal';
      if (code === 'session_write_failed') this.lastExit = ExitCode.storage;
      this.out.result(resultMessage(this.opened.sessionId, this.io.session.newId, errorFields(code, error instanceof Error ? error.message : String(error), this.io.clock() - started)));
    } finally {
      this.running = null;
      this.recoveryPending = false;
      this.planFresh = false;
    }
  }

  private promptRefusal(): string | undefined {
    // Appending never mends a broken chain: the refusal holds for every prompt of this process.
    if (this.opened.plan?.kind === 'degraded_history' && !this.options.acceptDegraded) {
      return 'the session history is degraded; start mend with --accept-degraded to run prompts on the history after the damage';
    }
    return undefined;
  }
}

export async function serveStreamJson(o: RunOptions, io: RunIo, out: OutputSink, opened: OpenedSession, decision: Decision): Promise<number> {
  const server = new StreamJsonServer(o, io, out, opened);
  server.startWith(decision);
  return server.serve();
}
