/**
 * `--input-format stream-json`: a thin adapter from the control protocol to the
 * session runtime. After `init` (and `recovery` when resumed) it reads ndjson
 * from its channel's input (stdin, a socket, an in-memory pair: control-channel.ts),
 * writing to its output: control requests are answered at once, also while a turn runs;
 * user messages queue in the runtime and run one turn at a time; every turn ends
 * with exactly one `result`. A bad line is reported and reading goes on.
 */
import { MendError, errorCodeOf, errorMessageOf } from '../../errors.js';
import type { HostEnv } from '../../runtime/host-env.js';
import type { SessionRuntime } from '../../runtime/session-runtime.js';
import type { Part } from '../../session/records.js';
import {
  ControlCancelRequestSchema,
  ControlRequestEnvelopeSchema,
  ControlResponseMessageSchema,
  HOST_CONTROL_SUBTYPES,
  HostControlRequestSchema,
  InputUserMessageSchema,
  type ContinueLastTurnAnswer,
  type HostControlRequest,
} from '../../wire/control.js';
import { APPROVAL_MODE_STRICTNESS } from '../../wire/approval-modes.js';
import type { WireErrorCode } from '../../wire/error-codes.js';
import { ExitCode, exitCodeForAbort } from '../../wire/exit-codes.js';
import { LineFramer, type FramedLine } from '../../wire/line-framer.js';
import { toRecoverySummary } from '../shared/recovery-summary.js';
import { WireEventMapper, errorFields, outcomeFields, resultMessage } from '../shared/wire-messages.js';
import type { RecoverySummary } from '../../wire/messages.js';
import { aborted, stdoutBackpressure } from '../shared/backpressure.js';
import { errorExtras } from '../shared/error-result.js';
import { exitCodeForError } from '../shared/exit-status.js';
import { createOutputSink, type OutputSink } from '../shared/output-sink.js';
import type { StdioRunOptions } from '../shared/run-options.js';
import { CAPABILITIES } from '../shared/session-lines.js';
import { startStdioRun } from '../shared/start-stdio-run.js';
import { stdioChannel, type ControlChannel } from './control-channel.js';
import { HostApprovals } from './host-approvals.js';
import { applyInitialize, applyInitializeServers, claudeInitializeFields } from './initialize-fields.js';
import { HostMcpChannel } from './host-mcp-channel.js';
import { TOOL_NAMES } from '../../runtime/tool-port.js';
import { initMessage } from '../shared/session-lines.js';
import { NEVER_ASK_MODE, approvalModeFromAlias } from '../../wire/approval-modes.js';

/**
 * The parts of a user message. One rule for empty prompts, as for `-p`: text that is
 * empty or only whitespace carries nothing, so a message of nothing else is empty.
 */
function userParts(content: string | ReadonlyArray<Record<string, unknown>>): Part[] {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  const parts: Part[] = [];
  for (const block of blocks) {
    if (block['type'] === 'text' && typeof block['text'] === 'string' && block['text'].trim() !== '') parts.push({ text: block['text'] });
    const image = block['type'] === 'image' ? imagePart(block['source']) : undefined;
    if (image) parts.push(image);
  }
  return parts;
}

/** What the server uses of the host: ids, the model's name and the stop signal. */
export type StreamJsonHost = Pick<HostEnv, 'runtime' | 'modelName' | 'signal'> & Partial<Pick<HostEnv, 'toolNames'>>;

/** Turns waiting in the queue before mend stops reading stdin. */
const MAX_QUEUED_TURNS = 32;

/** A base64 `image` block (Claude's shape) as the inline data part the providers send (OpenAI: image_url). */
function imagePart(source: unknown): Part | undefined {
  const s = source as { type?: unknown; media_type?: unknown; data?: unknown } | undefined;
  if (s?.type !== 'base64' || typeof s.media_type !== 'string' || typeof s.data !== 'string' || s.data === '') return undefined;
  return { inlineData: { mimeType: s.media_type, data: s.data } } as Part;
}

export class StreamJsonServer {
  private hostInitialized = false;
  /** The approval mode as the host last named it (Claude's dontAsk means: never ask). */
  private modeName: string;
  private readonly approvals: HostApprovals;
  private readonly mcpChannel: HostMcpChannel;
  private readonly handlers = new Set<Promise<void>>();
  private lastExit: number = ExitCode.success;
  private closing = false;

  constructor(
    private readonly options: StdioRunOptions,
    private readonly host: StreamJsonHost,
    private readonly channel: ControlChannel,
    /** Messages out, in the run's output format: a sink over `channel.output`. */
    private readonly out: OutputSink,
    private readonly runtime: SessionRuntime,
  ) {
    this.modeName = options.approvalModeName ?? options.approvalMode;
    this.approvals = new HostApprovals(
      (m) => out.emit(m),
      () => this.options.permissionTimeoutMs,
    );
    this.mcpChannel = new HostMcpChannel((m) => out.emit(m));
    runtime.setApprovalHandler(() => (this.hostAnswers() ? this.approvals.ask : undefined));
    // A host that stops reading stdout: the turn waits for the pipe to drain rather than buffer without end.
    runtime.setBackpressure(stdoutBackpressure(channel.output, host.signal));
    const mapper = new WireEventMapper(runtime.sessionId, host.runtime.newId, options.includePartialMessages);
    runtime.subscribe((event) => {
      for (const message of mapper.map(event)) out.emit(message);
      if (event.type === 'turn_finished' || event.type === 'turn_failed' || event.type === 'turn_aborted') {
        // A store that failed or a lease that was lost ends the session's writing: the exit code says so.
        const code = event.outcome.error?.code;
        if (code === 'session_write_failed' || code === 'store_unavailable' || code === 'session_lease_lost') this.lastExit = exitCodeForError(code);
        out.result(resultMessage(runtime.sessionId, host.runtime.newId, outcomeFields(event.outcome, host.modelName(runtime.settings.model))));
      }
    });
  }

  /** Whether the host answers `can_use_tool` now (docs/compat-claude.md, "When mend asks the host"). */
  private hostAnswers(): boolean {
    if (this.modeName === NEVER_ASK_MODE) return false;
    const prompts = this.options.permissionPrompts ?? 'after_initialize';
    return prompts === 'stdio' || (prompts === 'after_initialize' && this.hostInitialized);
  }

  async serve(): Promise<number> {
    const { signal } = this.host;
    const input = this.channel.input;
    const framer = new LineFramer();
    // A signal ends the session: stop waiting for input that may never come (the runtime stops the turn).
    const onSignal = () => input.destroy();
    signal.addEventListener('abort', onSignal, { once: true });
    try {
      for await (const chunk of input) {
        for (const line of framer.push(chunk as Buffer)) this.handleLine(line);
        if (signal.aborted) break;
        // Bounded input: with this many turns waiting, stop reading stdin until they run
        // (the pipe fills and the host's writes block), instead of queueing without end.
        if (this.runtime.queued >= MAX_QUEUED_TURNS) await Promise.race([this.runtime.whenQueueBelow(MAX_QUEUED_TURNS / 2), aborted(signal)]);
      }
      for (const line of framer.end()) this.handleLine(line);
    } catch (error) {
      // Destroying stdin on a signal ends the read loop with an error; that is not worth a line.
      if (!signal.aborted) this.systemError('stdin_error', `reading stdin failed: ${errorMessageOf(error)}`);
    }
    // End of input: nobody can answer a pending approval any more; finish what was asked, then stop.
    this.approvals.close();
    this.mcpChannel.close();
    while (this.handlers.size > 0) await Promise.all(this.handlers);
    this.closing = true;
    await this.runtime.close();
    signal.removeEventListener('abort', onSignal);
    if (signal.aborted) return exitCodeForAbort(signal.reason);
    return this.lastExit;
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
        // Every user message gets exactly one result: a refused one an error result, in queue order.
        const parsed = InputUserMessageSchema.safeParse(value);
        const parts = parsed.success ? userParts(parsed.data.message.content as string | Array<Record<string, unknown>>) : [];
        const problem = !parsed.success
          ? `invalid user message: ${parsed.error.issues[0]?.message ?? ''}`
          : parts.length === 0
            ? 'user message has no content (an empty string, no blocks, or only empty text)'
            : undefined;
        if (problem) {
          this.systemError('invalid_message', `line ${line.line}: ${problem}`, line.line);
          void this.runtime.refusePrompt('invalid_message', `line ${line.line}: ${problem}`);
          return;
        }
        void this.runtime.prompt(parts);
        return;
      }
      case 'control_request': {
        const envelope = ControlRequestEnvelopeSchema.safeParse(value);
        if (!envelope.success) {
          // The protocol promises one answer per request id: a usable id gets an error answer.
          const id = (value as { request_id?: unknown }).request_id;
          if (typeof id === 'string' && id !== '') {
            return this.respond(id, {
              ok: false,
              code: 'invalid_control_request',
              error: `line ${line.line}: control_request needs request.subtype (a string)`,
            });
          }
          return this.systemError('invalid_control_request', `line ${line.line}: control_request needs request_id and request.subtype`, line.line);
        }
        const handler = this.handleControl(envelope.data.request_id, envelope.data.request).finally(() => this.handlers.delete(handler));
        this.handlers.add(handler);
        return;
      }
      case 'control_response': {
        const parsed = ControlResponseMessageSchema.safeParse(value);
        if (parsed.success) {
          if (this.approvals.settle(parsed.data.response.request_id, parsed.data.response)) return;
          if (this.mcpChannel.settle(parsed.data.response.request_id, parsed.data.response)) return;
          // An answer to a request mend cancelled itself (timeout, interrupt) is dropped quietly.
          if (this.approvals.wasCancelled(parsed.data.response.request_id)) return;
          return this.systemError('unknown_request_id', `line ${line.line}: control_response for no pending request`, line.line);
        }
        // Malformed, but it names a pending request: deny at once rather than wait for the timeout.
        const id = (value as { response?: { request_id?: unknown } }).response?.request_id;
        const message = `line ${line.line}: malformed control_response: ${parsed.error.issues[0]?.message ?? ''}`;
        if (
          typeof id === 'string' &&
          (this.approvals.settle(id, { subtype: 'error', error: message }) || this.mcpChannel.settle(id, { subtype: 'error', error: message }))
        ) {
          return this.systemError('invalid_message', message, line.line);
        }
        return this.systemError('unknown_request_id', `line ${line.line}: control_response for no pending request`, line.line);
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

  private systemError(code: WireErrorCode, message: string, line?: number): void {
    this.out.emit({
      type: 'system',
      subtype: 'error',
      uuid: this.host.runtime.newId(),
      session_id: this.runtime.sessionId,
      error: line === undefined ? { code, message } : { code, message, line },
    });
  }

  private respond(requestId: string, answer: { ok: true; response: Record<string, unknown> } | { ok: false; code: WireErrorCode; error: string }): void {
    this.out.emit({
      type: 'control_response',
      response: answer.ok
        ? { subtype: 'success', request_id: requestId, response: answer.response }
        : { subtype: 'error', request_id: requestId, error: answer.error, code: answer.code, error_code: answer.code },
    });
  }

  private async handleControl(requestId: string, raw: { subtype: string }): Promise<void> {
    const parsed = HostControlRequestSchema.safeParse(raw);
    if (!parsed.success) {
      const known = (HOST_CONTROL_SUBTYPES as readonly string[]).includes(raw.subtype);
      return this.respond(requestId, {
        ok: false,
        code: known ? 'invalid_request' : 'unknown_subtype',
        error: known ? `invalid ${raw.subtype} request: ${parsed.error.issues[0]?.message ?? ''}` : `unknown control subtype ${JSON.stringify(raw.subtype)}`,
      });
    }
    try {
      this.respond(requestId, { ok: true, response: await this.control(parsed.data) });
    } catch (error) {
      this.respond(requestId, { ok: false, code: errorCodeOf(error), error: errorMessageOf(error) });
    }
  }

  private async control(request: HostControlRequest): Promise<Record<string, unknown>> {
    switch (request.subtype) {
      case 'initialize': {
        this.hostInitialized = true;
        applyInitialize(this.runtime, request);
        if (applyInitializeServers(this.runtime, request, this.mcpChannel)) {
          // `init` went out before these servers were known: once they are connected or failed, a
          // new `init` lists them (Claude Code, too, sends `init` again as a session goes on).
          void this.runtime.mcpSettled().then(() => {
            if (!this.closing) this.out.emit(initMessage(this.runtime, { ...this.host, toolNames: this.host.toolNames ?? TOOL_NAMES }, this.modeName));
          });
        }
        return {
          capabilities: { ...CAPABILITIES },
          session_id: this.runtime.sessionId,
          recovery: this.runtime.resumed ? await this.currentSummary() : null,
          ...claudeInitializeFields(this.host.modelName(this.runtime.settings.model), request),
        };
      }
      case 'mcp_message':
        // A host's in-process server speaking on its own (a notification, or a request of the server).
        if (!this.runtime.deliverMcpMessage(request.server_name, request.message)) {
          throw new MendError('invalid_request', `no SDK MCP server named ${JSON.stringify(request.server_name)} in this session`);
        }
        return { mcp_response: { jsonrpc: '2.0', result: {}, id: 0 } };
      case 'interrupt':
        return { interrupted: this.runtime.interrupt() };
      case 'set_permission_mode': {
        // The schema admitted only names the alias table knows (and explained the others).
        const mode = approvalModeFromAlias(request.mode);
        if (!mode) throw new MendError('invalid_request', `permission mode ${JSON.stringify(request.mode)} is not one mend has`);
        // Before initialize any stdin writer could loosen the mode the user started mend in:
        // only a stricter mode is accepted then.
        if (!this.hostInitialized && APPROVAL_MODE_STRICTNESS[mode] < APPROVAL_MODE_STRICTNESS[this.runtime.settings.approvalMode]) {
          throw new MendError(
            'invalid_request',
            `set_permission_mode before initialize may only make the mode stricter (${this.runtime.settings.approvalMode} -> ${mode} refused); send initialize first`,
          );
        }
        await this.runtime.setApprovalMode(mode, 'host');
        this.modeName = request.mode;
        // The caller's own word back: Claude's SDK accepts only its names in the answer.
        return { mode: request.mode };
      }
      case 'set_model':
        this.runtime.setModel(request.model);
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

  private async currentSummary(): Promise<RecoverySummary | null> {
    const current = await this.runtime.currentPlan();
    return current ? toRecoverySummary(current.plan, current.loaded.conversation) : null;
  }

  private async continueLastTurn(planId: string | undefined): Promise<ContinueLastTurnAnswer> {
    const answer = await this.runtime.continueLastTurn({ planId });
    const plan = answer.plan;
    const base = {
      plan_id: plan?.planId ?? '',
      kind: plan?.kind ?? ('clean' as const),
      interruption: plan && (plan.kind === 'interrupted_prompt' || plan.kind === 'interrupted_turn') ? plan.kind : ('none' as const),
    };
    if (!answer.accepted) return { accepted: false, ...base, code: answer.code, reason: answer.message };
    return { accepted: true, ...base };
  }
}

/** Runs `--input-format stream-json`: the session start, then the control protocol until stdin ends. */
export async function runStreamJson(o: StdioRunOptions, host: HostEnv): Promise<number> {
  const out = createOutputSink(o.outputFormat, host.stdout, host.stderr, o.debug, { verbose: o.verbose });
  let sessionIdForErrors = o.sessionId ?? '';
  let runtime: SessionRuntime | undefined;
  try {
    const run = await startStdioRun(o, host, out, (id) => (sessionIdForErrors = id));
    runtime = run.runtime;
    const server = new StreamJsonServer(o, host, stdioChannel(host), out, runtime);
    // --continue-interrupted / --auto-continue given on the command line.
    const { decision } = run;
    if (decision.action === 'refused') {
      out.result(resultMessage(runtime.sessionId, host.runtime.newId, errorFields(decision.code, decision.message)));
    } else if (decision.action === 'continue' && decision.execute === 'continuation') {
      void runtime.continueLastTurn({ planId: o.planId, auto: run.intent.type === 'auto_continue' });
    }
    return await server.serve();
  } catch (error) {
    const code = errorCodeOf(error);
    out.result(resultMessage(sessionIdForErrors, host.runtime.newId, errorFields(code, errorMessageOf(error), 0, errorExtras(error, sessionIdForErrors))));
    return exitCodeForError(code);
  } finally {
    await runtime?.close();
  }
}
