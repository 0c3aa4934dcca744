/**
 * A session of a `mend serve` daemon as a Transport: the Query speaks the same
 * stream-json protocol as to a CLI child, and this maps it onto the daemon's
 * REST calls and server-sent events.
 *
 * - start(): create, resume, or continue the newest session of the project;
 *   the answer's `init` and `recovery` lines come first, as from the CLI.
 * - User messages -> `POST /prompt`; control requests -> `/cancel`,
 *   `/continue` (`{planId}`), `/recovery`, `/approval-mode`, `/model`, answered
 *   as control responses; `can_use_tool` answers -> `POST /permission/:id`.
 * - Events -> the stream-json messages the daemon attached to them
 *   (`_meta.mend.messages`). Permission requests reach the Query only after
 *   it sent `initialize` (it has a canUseTool callback), as with the CLI; one
 *   another client answered first is cancelled.
 * - A broken event stream is resumed with `Last-Event-ID`; a session closed by
 *   the daemon ends the messages with an error.
 */
import type { McpServerEntry } from '../wire/mcp-server-config.js';
import { ContinueLastTurnAnswerSchema, type ContinueLastTurnAnswer } from '../wire/control.js';
import {
  CapabilitiesSchema,
  DaemonContinueAnswerSchema,
  SessionAnswerSchema,
  SessionListAnswerSchema,
  type PermissionBody,
  type SessionAnswer,
} from '../wire/daemon-api.js';
import type { DaemonEvent } from '../wire/daemon-events.js';
import { errorFields, resultMessage } from '../wire/result-lines.js';
import { AsyncQueue } from './async-queue.js';
import type { DaemonHttp } from './daemon-http.js';
import { MendDaemonError } from './daemon-http.js';
import { MendSdkError } from './errors.js';
import type { Transport } from './transport.js';
import { checkMessage, isInboundMessage, type InboundMessage } from './validate-message.js';

export interface DaemonSessionOptions {
  /** The session's project folder on the daemon's machine (under one of its roots). Default: the daemon's first root. */
  cwd?: string;
  /** Resume this session (by id). */
  resume?: string;
  /** Resume the most recently written session of the project. */
  continue?: boolean;
  /** Create the new session with this id. */
  sessionId?: string;
  approvalMode?: 'default' | 'auto-edit' | 'yolo' | 'plan';
  model?: string;
  /** MCP servers the daemon starts for this session (`{name: entry}`, the settings file's shape; no `sdk` servers over HTTP). */
  mcpServers?: Record<string, McpServerEntry>;
}

/** Reconnects of a broken event stream before giving up. */
const MAX_RECONNECTS = 5;

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** stream-json user content -> ACP prompt blocks (text only, as the daemon reads it). */
function promptBlocks(message: Record<string, unknown>): Array<{ type: 'text'; text: string }> {
  const content = record(message['message'])?.['content'];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) => {
    const b = record(block);
    return b?.['type'] === 'text' && typeof b['text'] === 'string' ? [{ type: 'text' as const, text: b['text'] }] : [];
  });
}

export class DaemonTransport implements Transport {
  private readonly queue = new AsyncQueue<InboundMessage>();
  private readonly stop = new AbortController();
  private session: SessionAnswer | null = null;
  private lastEventId = 0;
  private retryMs = 1000;
  /** The Query sent `initialize`: it answers permission requests. */
  private answersPermissions = false;
  private ended = false;

  constructor(
    private readonly http: DaemonHttp,
    private readonly options: DaemonSessionOptions = {},
  ) {}

  /** The session as the daemon answered create / resume (its id, client id, recovery summary). */
  get sessionAnswer(): SessionAnswer | null {
    return this.session;
  }

  get sessionId(): string | undefined {
    return this.session?.sessionId;
  }

  async start(): Promise<void> {
    if (this.session || this.ended) throw new MendSdkError('transport_started', 'the transport was already started or closed');
    const o = this.options;
    const request = {
      ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
      ...(o.approvalMode !== undefined ? { approvalMode: o.approvalMode } : {}),
      ...(o.mcpServers !== undefined ? { mcpServers: o.mcpServers } : {}),
    };
    let target = o.resume;
    if (o.continue) {
      const cwd = o.cwd ?? CapabilitiesSchema.parse((await this.http.request('/capabilities')).body).workspaceCwd;
      const listing = SessionListAnswerSchema.parse((await this.http.request(`/workspace/${encodeURIComponent(String(cwd))}/sessions?size=1`)).body);
      target = listing.sessions[0]?.sessionId;
      if (target === undefined) throw new MendSdkError('no_session_to_continue', `no session to continue in ${String(cwd)}`);
    }
    const answer =
      target !== undefined
        ? await this.http.request(`/session/${encodeURIComponent(target)}/resume`, { body: request, signal: this.stop.signal })
        : await this.http.request('/session', {
            body: { ...request, ...(o.sessionId !== undefined ? { sessionId: o.sessionId } : {}) },
            signal: this.stop.signal,
          });
    const session = SessionAnswerSchema.parse(answer.body);
    this.session = session;
    this.lastEventId = session.lastEventId;
    if (o.model !== undefined) await this.http.request(`/session/${session.sessionId}/model`, { body: { modelId: o.model }, clientId: session.clientId });
    for (const message of session.state._meta.mend.messages) this.push(message);
    void this.follow(session);
  }

  private push(message: unknown): void {
    if (!this.ended && isInboundMessage(message)) this.queue.push(checkMessage({ ...message }));
  }

  /** Reads the session's events, reconnecting from the last id seen, until ended. */
  private async follow(session: SessionAnswer): Promise<void> {
    let failures = 0;
    while (!this.ended) {
      try {
        const before = this.lastEventId;
        await this.http.events(session.sessionId, {
          lastEventId: this.lastEventId,
          epoch: session.eventEpoch,
          clientId: session.clientId,
          signal: this.stop.signal,
          onEvent: (event) => this.onEvent(event),
          onRetry: (ms) => (this.retryMs = ms),
        });
        if (this.ended) return;
        if (this.lastEventId > before) failures = 0;
        throw new MendDaemonError('connection_lost', `the event stream of session ${session.sessionId} ended`, 0);
      } catch (error) {
        if (this.ended) return;
        failures += 1;
        const fatal = error instanceof MendDaemonError && error.status >= 400;
        if (fatal || failures > MAX_RECONNECTS) return this.fail(error);
        // The first reconnect is immediate; later ones wait the server's `retry`.
        if (failures > 1) await new Promise((resolve) => setTimeout(resolve, Math.min(this.retryMs, 5000)));
      }
    }
  }

  private onEvent(event: DaemonEvent): void {
    if (this.ended) return;
    if (event.id !== undefined) this.lastEventId = Math.max(this.lastEventId, event.id);
    switch (event.type) {
      case 'permission_request':
        if (!this.answersPermissions) return;
        break;
      case 'permission_resolved': {
        // Answered (by this client or another): a callback still running is cancelled.
        const requestId = event.data['requestId'];
        if (typeof requestId === 'string') this.push({ type: 'control_cancel_request', request_id: requestId });
        return;
      }
      case 'session_closed':
        return this.fail(
          new MendDaemonError(
            'session_closed',
            `the daemon closed session ${String(event.data['sessionId'])} (${String(event.data['reason'])})`,
            0,
            event.data,
          ),
        );
      case 'state_resync_required':
        return this.fail(
          new MendDaemonError(
            'resync_required',
            `events of session ${String(event.data['sessionId'])} were lost (${String(event.data['reason'])}); resume it again`,
            0,
            event.data,
          ),
        );
      default:
        break;
    }
    for (const message of event._meta?.mend?.messages ?? []) this.push(message);
  }

  private fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.stop.abort();
    this.queue.fail(error);
  }

  // ---- writing ----------------------------------------------------------------------------

  async write(message: object | string): Promise<void> {
    const session = this.session;
    if (typeof message === 'string') throw new MendSdkError('unsupported', 'a daemon session takes messages, not raw bytes');
    if (!session || this.ended) throw new MendSdkError('transport_closed', 'cannot write: the daemon session is closed');
    const m = message as Record<string, unknown>;
    switch (m['type']) {
      case 'user':
        return this.prompt(session, m);
      case 'control_request':
        void this.control(session, String(m['request_id']), record(m['request']) ?? {});
        return;
      case 'control_response':
        return this.permissionAnswer(session, record(m['response']) ?? {});
      default:
        throw new MendSdkError('unsupported', `a daemon session does not take ${String(m['type'])} messages`);
    }
  }

  /** A prompt the daemon refuses still ends in one result, as a refused turn does with the CLI. */
  private async prompt(session: SessionAnswer, message: Record<string, unknown>): Promise<void> {
    try {
      await this.http.request(`/session/${session.sessionId}/prompt`, { body: { prompt: promptBlocks(message) }, clientId: session.clientId });
    } catch (error) {
      if (!(error instanceof MendDaemonError) || error.status === 0) throw error;
      this.push(resultMessage(session.sessionId, () => crypto.randomUUID(), errorFields(error.code, error.message)));
    }
  }

  private async control(session: SessionAnswer, requestId: string, request: Record<string, unknown>): Promise<void> {
    const subtype = String(request['subtype']);
    const base = `/session/${session.sessionId}`;
    const call = (path: string, body?: unknown) =>
      this.http.request<Record<string, unknown>>(`${base}${path}`, { ...(body !== undefined ? { body } : {}), clientId: session.clientId });
    let response: Record<string, unknown>;
    try {
      switch (subtype) {
        case 'initialize':
          this.answersPermissions = true;
          response = {
            capabilities: { recovery: true, continue_last_turn: true, get_recovery_plan: true, interrupt: true, can_use_tool: true },
            session_id: session.sessionId,
            recovery: null,
          };
          break;
        case 'interrupt':
          response = { interrupted: (await call('/cancel', {})).body['cancelled'] === true };
          break;
        case 'continue_last_turn':
          response = continueAnswer((await call('/continue', typeof request['plan_id'] === 'string' ? { planId: request['plan_id'] } : {})).body);
          break;
        case 'get_recovery_plan':
          response = (await call('/recovery?format=stream-json')).body;
          break;
        case 'set_permission_mode':
          response = { mode: (await call('/approval-mode', { mode: request['mode'] })).body['mode'] };
          break;
        case 'set_model':
          await call('/model', { modelId: request['model'] });
          response = { model: request['model'] };
          break;
        default:
          throw new MendSdkError('unknown_subtype', `a daemon session does not handle ${subtype}`);
      }
    } catch (error) {
      const code = error instanceof MendSdkError ? error.code : 'internal';
      this.push({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: (error as Error).message, code } });
      return;
    }
    this.push({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });
  }

  /** The Query's answer to a permission request; 404 means another client answered first. */
  private async permissionAnswer(session: SessionAnswer, response: Record<string, unknown>): Promise<void> {
    const requestId = String(response['request_id']);
    const decision = record(response['response']);
    const allow = response['subtype'] === 'success' && decision?.['behavior'] === 'allow';
    const updatedInput = record(decision?.['updatedInput']);
    const message = typeof decision?.['message'] === 'string' ? decision['message'] : typeof response['error'] === 'string' ? response['error'] : undefined;
    const body: PermissionBody = {
      outcome: { outcome: 'selected', optionId: allow ? 'proceed_once' : 'cancel' },
      ...(updatedInput || message ? { _meta: { mend: { ...(updatedInput ? { updatedInput } : {}), ...(message ? { message } : {}) } } } : {}),
    };
    await this.http
      .request(`/session/${session.sessionId}/permission/${encodeURIComponent(requestId)}`, { body, clientId: session.clientId, accept: [404] })
      .catch(() => undefined);
  }

  // ---- ending -----------------------------------------------------------------------------

  readMessages(): AsyncIterable<InboundMessage> {
    return this.queue;
  }

  /** The Query is done with the session: stop reading its events (the session stays open on the daemon). */
  endInput(): void {
    if (this.ended) return;
    this.ended = true;
    this.stop.abort();
    this.queue.end();
  }

  async close(): Promise<void> {
    this.endInput();
  }

  endedError(): MendSdkError {
    return new MendSdkError('detached', 'detached from the daemon session');
  }
}

/** The daemon's camelCase continue answer -> the stream-json `continue_last_turn` answer. */
function continueAnswer(body: unknown): ContinueLastTurnAnswer {
  const answer = DaemonContinueAnswerSchema.parse(body);
  const snake = answer.accepted
    ? {
        accepted: true,
        interruption: answer.interruption,
        plan_id: answer.planId,
        kind: answer.kind,
        previous_attempts: answer.previousAttempts,
        prompt_id: answer.promptId,
      }
    : {
        accepted: false,
        interruption: answer.interruption,
        plan_id: answer.planId ?? '',
        kind: answer.kind ?? 'clean',
        code: answer.code,
        reason: answer.message,
      };
  return ContinueLastTurnAnswerSchema.parse(snake);
}
