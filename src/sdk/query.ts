/**
 * A Query: one session driven over the stream-json protocol, whatever the
 * transport (a CLI child process, or a daemon session over HTTP + SSE).
 * Messages are read into a queue as they arrive, so control methods work from
 * inside the consumer's `for await` loop. Control traffic (responses,
 * can_use_tool) is handled here and never yielded.
 */
import { randomUUID } from 'node:crypto';
import { ContinueLastTurnAnswerSchema, HostControlRequestSchema, InputUserMessageSchema, type HostControlRequest } from '../wire/control.js';
import { RecoverySummarySchema, type RecoverySummary } from '../wire/messages.js';
import { resultMessage, successFields } from '../wire/result-lines.js';
import { AsyncQueue } from './async-queue.js';
import { CliRequestHandler, type ControlAnswer } from './cli-requests.js';
import { MendAbortError, MendCliError, MendControlError, MendProcessError, MendSdkError } from './errors.js';
import type { Transport } from './transport.js';
import type {
  CanUseTool,
  ContinueLastTurnResult,
  PermissionMode,
  Prompt,
  SDKInitMessage,
  SDKMessage,
  SDKRecoveryMessage,
  SDKUserMessageInput,
} from './types.js';
import { validationIssues, type InboundMessage } from './validate-message.js';
import { HostServerTransport, isSdkMcpServer } from './host-server-transport.js';
import type { SdkMcpServerConfig } from './sdk-mcp-server.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** An `mcpServers` entry: an in-process server, or a server the CLI starts (mcp-config shapes). */
export type McpServerOption = SdkMcpServerConfig | Record<string, unknown>;

interface Pending {
  subtype: string;
  resolve: (answer: Record<string, unknown>) => void;
  reject: (error: unknown) => void;
}

const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;

export interface QueryConfig {
  /** MCP servers for the session: in-process ones (createSdkMcpServer) and entries the CLI starts ({command, args, env} | {type, url, headers}). */
  mcpServers?: Record<string, McpServerOption> | undefined;
  /** How long to wait for the CLI's init line before failing with `startup_timeout` (default 30 s). */
  startupTimeoutMs?: number | undefined;
  prompt?: Prompt;
  canUseTool?: CanUseTool | undefined;
  abortSignal?: AbortSignal | undefined;
}

const noop = (): void => {};

function userLine(message: SDKUserMessageInput): Record<string, unknown> {
  return InputUserMessageSchema.parse({ session_id: '', parent_tool_use_id: null, ...message });
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export class Query implements AsyncIterableIterator<SDKMessage> {
  /** The recovery line of a resumed session; null when `init` says the session was not resumed. */
  readonly recovery: Promise<SDKRecoveryMessage | null>;
  private settleRecovery!: { resolve: (m: SDKRecoveryMessage | null) => void; reject: (e: unknown) => void; done: boolean };
  private readonly output = new AsyncQueue<SDKMessage>();
  private readonly pending = new Map<string, Pending>();
  private readonly cliRequests: CliRequestHandler;
  private readonly ready: Promise<void>;
  private initMessage: SDKInitMessage | undefined;
  private requestCounter = 0;
  private expectedResults = 0;
  private resultsSeen = 0;
  private promptDone = false;
  /** A resume without a prompt: the recovery line is all it has to say unless the host acts on it. */
  private resumeOnly = false;
  private recoveryLine: SDKRecoveryMessage | undefined;
  private finished = false;
  private closePromise: Promise<void> | null = null;
  private abortError: MendAbortError | null = null;
  private promptError: { value: unknown } | null = null;
  private lastErrorResult: { code: string; message: string; holder: { host?: string; pid?: number | null; since?: string } | undefined } | undefined;
  private startupTimer: NodeJS.Timeout | undefined;
  private readonly sdkServers = new Map<string, { transport: HostServerTransport; connected: Promise<void> }>();

  constructor(
    readonly transport: Transport,
    private readonly config: QueryConfig = {},
  ) {
    this.cliRequests = new CliRequestHandler(
      config.canUseTool,
      (id, a) => this.answer(id, a),
      () => this.maybeEndInput(),
      (server, message) => this.toSdkServer(server, message),
    );
    for (const [name, entry] of Object.entries(config.mcpServers ?? {})) {
      if (!isSdkMcpServer(entry)) continue;
      const transport = new HostServerTransport((message) => {
        // What the server says on its own (its tool list changed) goes to the CLI.
        void this.request({ subtype: 'mcp_message', server_name: name, message: message as { jsonrpc: '2.0' } }).catch(noop);
      });
      this.sdkServers.set(name, { transport, connected: entry.instance.connect(transport) });
    }
    this.recovery = new Promise((resolve, reject) => (this.settleRecovery = { resolve, reject, done: false }));
    this.recovery.catch(noop);
    const signal = config.abortSignal;
    if (signal) {
      if (signal.aborted) this.abortError = new MendAbortError(undefined, { cause: signal.reason });
      else signal.addEventListener('abort', () => this.abort(signal.reason), { once: true });
    }
    this.ready = this.start();
    this.ready.catch(noop);
  }

  /** The `init` message, once it has arrived. */
  get init(): SDKInitMessage | undefined {
    return this.initMessage;
  }

  private async start(): Promise<void> {
    try {
      if (this.abortError) throw this.abortError;
      await this.transport.start();
    } catch (error) {
      this.finish(error);
      throw error;
    }
    void this.pump();
    // A CLI that prints garbage (or nothing) and stays alive must not hang the host.
    const startupMs = this.config.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
    this.startupTimer = setTimeout(() => {
      if (this.initMessage || this.finished) return;
      this.promptError ??= { value: new MendSdkError('startup_timeout', `the mend CLI printed no init line within ${startupMs} ms`) };
      void this.close();
    }, startupMs);
    this.startupTimer.unref?.();
    const servers = Object.entries(this.config.mcpServers ?? {});
    if (this.config.canUseTool || servers.length > 0) {
      const external = Object.fromEntries(servers.filter(([, entry]) => !isSdkMcpServer(entry)));
      const sdk = servers.filter(([, entry]) => isSdkMcpServer(entry)).map(([name]) => name);
      this.request({
        subtype: 'initialize',
        ...(Object.keys(external).length > 0 ? { mcpServers: external } : {}),
        ...(sdk.length > 0 ? { sdkMcpServers: sdk } : {}),
      }).catch(noop);
    }
    void this.streamPrompt();
  }

  /** A message of the CLI's MCP client for an in-process server; resolves with the server's reply. */
  private async toSdkServer(name: string, message: Record<string, unknown>): Promise<unknown> {
    const server = this.sdkServers.get(name);
    if (!server) throw new MendSdkError('unknown_server', `no SDK MCP server named ${JSON.stringify(name)}`);
    await server.connected;
    return server.transport.handle(message as JSONRPCMessage);
  }

  // ---- reading ---------------------------------------------------------------------------

  private async pump(): Promise<void> {
    try {
      for await (const message of this.transport.readMessages()) this.route(message);
      this.finish(null);
    } catch (error) {
      this.finish(error);
    }
  }

  private route(m: InboundMessage): void {
    if (m.type === 'control_response') return this.onControlResponse(m);
    if (m.type === 'control_request') return void this.cliRequests.handle(m);
    if (m.type === 'control_cancel_request') {
      if (typeof m['request_id'] === 'string') this.cliRequests.cancel(m['request_id']);
      return;
    }
    if (m.type === 'system' && m['subtype'] === 'init') {
      clearTimeout(this.startupTimer);
      this.initMessage = m as SDKInitMessage;
      if (m['resumed'] !== true) this.resolveRecovery(null);
      // Nothing more to send unless the host continues or sends a message in response to what it reads.
      else if (this.config.prompt === undefined) this.resumeOnly = this.promptDone = true;
    } else if (m.type === 'system' && m['subtype'] === 'recovery') {
      this.recoveryLine = m as SDKRecoveryMessage;
      this.resolveRecovery(m as SDKRecoveryMessage);
    } else if (this.initMessage) {
      // The recovery line comes right after init or not at all.
      this.resolveRecovery(null);
    }
    this.output.push(m as SDKMessage);
    if (m.type === 'result' && m['is_error'] === true) {
      const e = record(m['error']);
      if (e && typeof e['code'] === 'string') {
        this.lastErrorResult = {
          code: e['code'],
          message: String(e['message'] ?? ''),
          holder: record(e['holder']) as { host?: string; pid?: number | null; since?: string } | undefined,
        };
      }
    }
    if (m.type === 'result') {
      this.resultsSeen += 1;
      this.maybeEndInput();
    }
  }

  private resolveRecovery(value: SDKRecoveryMessage | null): void {
    if (this.settleRecovery.done) return;
    this.settleRecovery.done = true;
    this.settleRecovery.resolve(value);
  }

  private onControlResponse(m: InboundMessage): void {
    const response = record(m['response']);
    const id = response?.['request_id'];
    const pending = typeof id === 'string' ? this.pending.get(id) : undefined;
    if (!response || !pending || typeof id !== 'string') return;
    this.pending.delete(id);
    const issues = validationIssues(m);
    if (issues !== undefined) {
      pending.reject(new MendControlError('invalid_response', `malformed answer to ${pending.subtype}: ${issues}`, pending.subtype, id));
    } else if (response['subtype'] === 'success') {
      const answer = record(response['response']) ?? {};
      // Counted here, synchronously, so the continuation's result cannot arrive before it is expected.
      if (pending.subtype === 'continue_last_turn' && answer['accepted'] === true) this.expectedResults += 1;
      pending.resolve(answer);
    } else {
      const code = typeof response['code'] === 'string' ? response['code'] : 'control_error';
      pending.reject(new MendControlError(code, String(response['error']), pending.subtype, id));
    }
    this.maybeEndInput();
  }

  private answer(requestId: string, a: ControlAnswer): Promise<void> {
    const response =
      'response' in a
        ? { subtype: 'success', request_id: requestId, response: a.response }
        : { subtype: 'error', request_id: requestId, error: a.error, code: a.code };
    return this.transport.write({ type: 'control_response', response }).catch(noop);
  }

  private finish(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.startupTimer);
    const failure = this.abortError ?? this.promptError?.value ?? this.explain(error);
    if (!failure && this.resumeOnly && this.resultsSeen === 0 && this.recoveryLine && !this.closePromise)
      this.output.push(this.noTurnResult(this.recoveryLine));
    if (failure) this.output.fail(failure);
    else this.output.end();
    const why = failure ?? this.transport.endedError?.() ?? new MendSdkError('stream_ended', 'the message stream ended');
    const code = why instanceof MendSdkError ? why.code : 'stream_ended';
    for (const [id, p] of this.pending) {
      p.reject(new MendControlError(code, `no answer to ${p.subtype}: ${(why as Error).message ?? String(why)}`, p.subtype, id, { cause: why }));
    }
    this.pending.clear();
    this.cliRequests.abortAll(why);
    if (!this.settleRecovery.done) {
      this.settleRecovery.done = true;
      this.settleRecovery.reject(
        this.initMessage
          ? new MendSdkError('no_recovery_line', 'the session ended before its recovery line', { cause: why })
          : (failure ?? new MendSdkError('exited_before_init', 'the session ended before init')),
      );
    }
  }

  /**
   * The terminal message of a resume that ran no turn (the host neither continued nor sent a
   * message): a success `result` with `num_turns: 0` saying why, the same shape a run without
   * stream-json input prints (`mend --continue -o stream-json`), so a loop waiting for `result`
   * ends whatever the plan was.
   */
  private noTurnResult(recovery: SDKRecoveryMessage): SDKMessage {
    const why = recovery.reason ?? (recovery.can_continue ? `${recovery.kind}: not continued (${recovery.plan_id})` : `${recovery.kind}: nothing to continue`);
    return resultMessage(recovery.session_id, randomUUID, successFields(why));
  }

  /** A process failure told in the CLI's own words (its last error result), or a silent exit as an error. */
  private explain(error: unknown): unknown {
    const last = this.lastErrorResult;
    if (error instanceof MendProcessError && last) {
      return new MendCliError(last.code, last.message, error, last.holder);
    }
    if (!error && !this.initMessage && !this.closePromise) {
      return new MendSdkError('exited_before_init', 'the mend CLI exited without printing anything (no init line)');
    }
    return error;
  }

  // ---- writing ---------------------------------------------------------------------------

  private async streamPrompt(): Promise<void> {
    const prompt = this.config.prompt;
    if (prompt === undefined) return;
    try {
      const messages: AsyncIterable<SDKUserMessageInput> | SDKUserMessageInput[] =
        typeof prompt === 'string' ? [{ type: 'user', message: { role: 'user', content: prompt } }] : prompt;
      for await (const message of messages) {
        if (this.finished || this.closePromise) return;
        const line = userLine(message);
        this.expectedResults += 1;
        // A failed write means the peer is gone; the reader reports how it ended.
        if (
          !(await this.transport.write(line).then(
            () => true,
            () => false,
          ))
        )
          return;
      }
      this.promptDone = true;
      this.maybeEndInput();
    } catch (error) {
      // The prompt iterable threw or yielded an invalid message: close the transport and surface the error from the iterator.
      if (this.finished || this.closePromise) return;
      this.promptError = { value: error };
      void this.close();
    }
  }

  /**
   * Sends one more user message (a turn is queued); for queries started without a prompt. A
   * resume without a prompt ends once the host asks for the next message with nothing in
   * flight (then a `num_turns: 0` result ends it), so send this in response to a message.
   */
  async sendUserMessage(message: SDKUserMessageInput): Promise<void> {
    await this.ready;
    const line = userLine(message);
    this.expectedResults += 1;
    try {
      await this.transport.write(line);
    } catch (error) {
      this.expectedResults -= 1;
      throw error;
    }
  }

  /**
   * Ends stdin once the prompt is fully sent, every turn it started (and every
   * accepted continuation) has its result, nothing is pending, init (and the
   * recovery line of a resumed session) has arrived, and the consumer
   * has read everything and asks for more. The last condition keeps the input open
   * while the consumer still handles a message (say, the recovery line) and may
   * send a control request in response.
   */
  private maybeEndInput(): void {
    if (
      this.promptDone &&
      this.settleRecovery.done &&
      this.output.waiting &&
      this.resultsSeen >= this.expectedResults &&
      this.pending.size === 0 &&
      this.cliRequests.pending === 0
    ) {
      this.transport.endInput();
    }
  }

  private async request(request: HostControlRequest): Promise<Record<string, unknown>> {
    const subtype = request.subtype;
    const checked = HostControlRequestSchema.safeParse(request);
    if (!checked.success) throw new MendControlError('invalid_request', `invalid ${subtype} request: ${checked.error.message}`, subtype, undefined);
    await this.ready;
    if (this.finished || this.closePromise) throw new MendControlError('closed', `cannot send ${subtype}: the query is closed`, subtype, undefined);
    const id = `sdk_${++this.requestCounter}_${randomUUID().slice(0, 8)}`;
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => this.pending.set(id, { subtype, resolve, reject }));
    try {
      await this.transport.write({ type: 'control_request', request_id: id, request });
    } catch (error) {
      this.pending.delete(id);
      throw new MendControlError('write_failed', `cannot send ${subtype}: ${(error as Error).message}`, subtype, id, { cause: error });
    }
    return answer;
  }

  // ---- control API -----------------------------------------------------------------------

  /** Stops the running turn (it ends with an aborted result); the session stays open for more turns. */
  async interrupt(): Promise<void> {
    // The turn stops, so nothing waits for the host's approvals any more: settle them now,
    // even if a callback ignores its signal.
    this.cliRequests.abortAll(new MendSdkError('interrupted', 'the turn was interrupted'));
    await this.request({ subtype: 'interrupt' });
  }

  /** Asks mend to continue the interrupted turn; when accepted, the continuation runs as a turn ending with a result. */
  async continueLastTurn(opts: { planId?: string } = {}): Promise<ContinueLastTurnResult> {
    const answer = await this.request({ subtype: 'continue_last_turn', ...(opts.planId !== undefined ? { plan_id: opts.planId } : {}) });
    const parsed = ContinueLastTurnAnswerSchema.safeParse(answer);
    if (!parsed.success)
      throw new MendControlError('invalid_response', `malformed continue_last_turn answer: ${parsed.error.message}`, 'continue_last_turn', undefined);
    return answer as ContinueLastTurnResult;
  }

  /** The current recovery plan summary (same fields as the recovery line); null when mend reports none. */
  async getRecoveryPlan(): Promise<RecoverySummary | null> {
    const answer = await this.request({ subtype: 'get_recovery_plan' });
    const summary = 'plan_id' in answer ? answer : 'recovery' in answer ? answer['recovery'] : answer;
    if (summary === null) return null;
    const parsed = RecoverySummarySchema.safeParse(summary);
    if (!parsed.success)
      throw new MendControlError('invalid_response', `malformed get_recovery_plan answer: ${parsed.error.message}`, 'get_recovery_plan', undefined);
    return summary as RecoverySummary;
  }

  async setPermissionMode(mode: PermissionMode): Promise<void> {
    await this.request({ subtype: 'set_permission_mode', mode });
  }

  async setModel(model: string): Promise<void> {
    await this.request({ subtype: 'set_model', model });
  }

  /** Ends the transport (a CLI: stdin, then SIGTERM, then SIGKILL; a daemon session: detaches) and the iteration. Safe to call more than once. */
  close(): Promise<void> {
    this.closePromise ??= (async () => {
      this.cliRequests.abortAll(new MendSdkError('closed', 'the query was closed'));
      await this.ready.catch(noop);
      await this.transport.close();
      for (const server of this.sdkServers.values()) await server.transport.close().catch(noop);
      this.output.discard();
      this.finish(null);
    })();
    return this.closePromise;
  }

  private abort(reason: unknown): void {
    this.abortError ??= new MendAbortError(undefined, { cause: reason });
    // Abort means interrupt: the running turn is stopped and recorded as aborted before
    // stdin ends (the interrupt line goes first down the same pipe), then the CLI closes.
    if (!this.finished && !this.closePromise) {
      this.cliRequests.abortAll(this.abortError);
      void this.ready
        .then(() => this.transport.write({ type: 'control_request', request_id: `sdk_abort_${randomUUID().slice(0, 8)}`, request: { subtype: 'interrupt' } }))
        .catch(noop);
    }
    void this.ready.catch(noop).then(() => this.close());
  }

  // ---- iteration -------------------------------------------------------------------------

  next(): Promise<IteratorResult<SDKMessage>> {
    const next = this.output.next();
    this.maybeEndInput();
    return next;
  }

  /** Called by `break` / `return` in a for-await loop: closes the transport. */
  async return(): Promise<IteratorResult<SDKMessage>> {
    await this.close();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
