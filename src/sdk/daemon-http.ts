/**
 * The HTTP side of mend's daemon-backed SDK: JSON requests with the bearer
 * token and the client id, `{error, code}` answers as MendDaemonError, and the
 * session's server-sent events read with eventsource-parser.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { CLIENT_ID_HEADER, ErrorBodySchema, EVENT_EPOCH_HEADER } from '../wire/daemon-api.js';
import { DaemonEventSchema, type DaemonEvent } from '../wire/daemon-events.js';
import { MendSdkError } from './errors.js';

/** A non-2xx answer of the daemon (or no answer at all: status 0). */
export class MendDaemonError extends MendSdkError {
  constructor(
    code: string,
    message: string,
    /** HTTP status; 0 when the daemon could not be reached. */
    readonly status: number,
    /** The answer's JSON body, when there was one. */
    readonly body?: unknown,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.name = 'MendDaemonError';
  }
}

export interface DaemonConnection {
  /** Base URL of the daemon, e.g. the `url` of its ready line. */
  url: string;
  /** Bearer token (`mend serve --token` / MEND_SERVER_TOKEN on the daemon's side). */
  token?: string | undefined;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch | undefined;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  clientId?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Statuses that are answers, not errors (e.g. 404 for a permission someone else answered). */
  accept?: readonly number[];
}

export class DaemonHttp {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly connection: DaemonConnection) {
    this.baseUrl = connection.url.replace(/\/+$/, '');
    this.fetchImpl = connection.fetch ?? globalThis.fetch.bind(globalThis);
  }

  private headers(extra: Record<string, string>, clientId: string | undefined): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    if (this.connection.token) headers['Authorization'] = `Bearer ${this.connection.token}`;
    if (clientId) headers[CLIENT_ID_HEADER] = clientId;
    return headers;
  }

  /** One request; the parsed JSON answer (undefined for an empty one). */
  async request<T = unknown>(path: string, options: RequestOptions = {}): Promise<{ status: number; body: T }> {
    const hasBody = options.body !== undefined;
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method: options.method ?? (hasBody ? 'POST' : 'GET'),
        headers: this.headers(hasBody ? { 'Content-Type': 'application/json' } : {}, options.clientId),
        ...(hasBody ? { body: JSON.stringify(options.body) } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new MendDaemonError('connection_failed', `cannot reach the mend daemon at ${this.baseUrl}: ${(error as Error).message}`, 0, undefined, {
        cause: error,
      });
    }
    const text = await response.text();
    let body: unknown;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (!response.ok && !options.accept?.includes(response.status)) {
      const parsed = ErrorBodySchema.safeParse(body);
      const code = parsed.success ? parsed.data.code : `http_${response.status}`;
      const message = parsed.success ? parsed.data.error : `HTTP ${response.status}`;
      throw new MendDaemonError(code, `${options.method ?? (hasBody ? 'POST' : 'GET')} ${path}: ${message}`, response.status, body);
    }
    return { status: response.status, body: body as T };
  }

  /**
   * Reads a session's events until the stream ends or `signal` aborts. Frames
   * that are not mend/Qwen envelopes (`v: 1`, a `type`) are skipped.
   */
  async events(
    sessionId: string,
    options: {
      lastEventId: number;
      epoch: string | undefined;
      clientId: string | undefined;
      signal: AbortSignal;
      onEvent: (event: DaemonEvent) => void;
      onRetry: (ms: number) => void;
    },
  ): Promise<void> {
    const headers = this.headers({ Accept: 'text/event-stream', 'Last-Event-ID': String(options.lastEventId) }, options.clientId);
    if (options.epoch !== undefined) headers[EVENT_EPOCH_HEADER] = options.epoch;
    const path = `/session/${encodeURIComponent(sessionId)}/events`;
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, { headers, signal: options.signal });
    } catch (error) {
      if (options.signal.aborted) return;
      throw new MendDaemonError('connection_failed', `cannot reach the mend daemon at ${this.baseUrl}: ${(error as Error).message}`, 0, undefined, {
        cause: error,
      });
    }
    if (!response.ok || !(response.headers.get('content-type') ?? '').includes('text/event-stream') || !response.body) {
      const text = await response.text().catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      const parsed = ErrorBodySchema.safeParse(body);
      throw new MendDaemonError(
        parsed.success ? parsed.data.code : `http_${response.status}`,
        `GET ${path}: ${parsed.success ? parsed.data.error : `HTTP ${response.status}`}`,
        response.status,
        body,
      );
    }
    const parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        let value: unknown;
        try {
          value = JSON.parse(message.data);
        } catch {
          return;
        }
        const event = DaemonEventSchema.safeParse(value);
        if (event.success) options.onEvent(event.data);
      },
      onRetry: options.onRetry,
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (options.signal.aborted) return;
      }
    } catch (error) {
      if (options.signal.aborted) return;
      throw new MendDaemonError('connection_lost', `the event stream of session ${sessionId} broke: ${(error as Error).message}`, 0, undefined, {
        cause: error,
      });
    }
  }
}
