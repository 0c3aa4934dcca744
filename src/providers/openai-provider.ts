/**
 * OpenAI-compatible chat completions, streamed. The request goes through a
 * ChatStreamTransport (chat-stream/: node's HTTP client by default, the `openai` package
 * as its oracle), loaded on the first model call only, so commands that never talk to a
 * model do not pay for it. Both fail with the package's error classes, mapped here.
 */
import type * as OpenAIErrorModule from 'openai/error';
import { MendError, isMendError } from '../errors.js';
import type { ChatStreamTransport, ChatTransportKind, ChatTransportSettings } from './chat-stream/chat-stream.js';
import { ChatChunkMapper } from './openai-chunks.js';
import { toChatMessages, toChatTools } from './openai-messages.js';
import type { ModelProvider, ModelRequest, ProviderEvent } from './provider.js';
import { completionAsChunk, displayURL, networkCause } from './openai-diagnostics.js';
import { redactSecrets } from './redact-secrets.js';

export interface OpenAIProviderSettings {
  apiKey?: string | undefined;
  /** Defaults to the OpenAI API; set it for any compatible server. */
  baseURL?: string | undefined;
  model?: string | undefined;
  /** Retries of failed requests (connection errors, 408/409/429/5xx). Default 2. */
  maxRetries?: number | undefined;
  /** Limit for the response to start, and for each silence between chunks once it has. Default 300 000. */
  timeoutMs?: number | undefined;
  /** How requests are sent: `http` (default) or `sdk` (the `openai` package; the oracle). */
  transport?: ChatTransportKind | undefined;
}

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
const DEFAULT_TIMEOUT_MS = 300_000;
const DEFAULT_MAX_RETRIES = 2;
/** A whole (non-streamed) completion is read up to this size. */
const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024;

/** The `openai` package's error classes, which both transports throw. */
type OpenAIErrors = typeof OpenAIErrorModule;

export class OpenAIProvider implements ModelProvider {
  readonly name = 'openai';
  private transport: Promise<ChatStreamTransport> | undefined;

  constructor(private readonly settings: OpenAIProviderSettings) {}

  get model(): string {
    return this.settings.model ?? '';
  }

  async *stream(req: ModelRequest): AsyncGenerator<ProviderEvent> {
    const { apiKey, model } = this.requireConfig();
    if (req.signal?.aborted) throw abortedError();
    // Mapping errors (invalid_history) are ours and carry their own code; raise them as they are.
    const messages = toChatMessages(req.history, req.systemPrompt);
    const tools = toChatTools(req.tools);
    const timeoutMs = this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;

    // Our own controller: the caller's signal and the idle watchdog both end the request through it.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    // The client's timeout stops once headers arrive; a server that then goes silent
    // mid-stream would hang the turn forever without this watchdog.
    let idleTimer: NodeJS.Timeout | undefined;
    let idleExpired = false;
    const armIdle = (): void => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        idleExpired = true;
        controller.abort();
      }, timeoutMs);
    };
    const disarmIdle = (): void => clearTimeout(idleTimer);

    let completed = false;
    // Where the request got to, so an error can say what happened: never answered, or cut mid-response.
    const progress: StreamProgress = { phase: 'request', chunks: 0 };
    try {
      const transport = await this.load(apiKey);
      const response = await transport.open(
        {
          model,
          messages,
          stream: true,
          stream_options: { include_usage: true },
          // Some compatible servers reject an empty tools array.
          ...(tools.length > 0 ? { tools } : {}),
        },
        { signal: controller.signal },
      );
      progress.phase = 'stream';
      const { contentType } = response;
      const mapper = new ChatChunkMapper();
      armIdle();
      if (/\bjson\b/i.test(contentType)) {
        // A server that ignored `stream: true` and sent one whole completion.
        const chunk = await this.readCompletion(response, model);
        disarmIdle();
        progress.chunks += 1;
        for (const event of mapper.map(chunk)) yield event;
      } else {
        for await (const chunk of response.chunks) {
          // Time spent by the consumer between pulls is not server silence.
          disarmIdle();
          progress.chunks += 1;
          for (const event of mapper.map(chunk)) yield event;
          armIdle();
        }
      }
      disarmIdle();
      // The library ends iteration quietly when its signal aborts; that is not a finished response.
      if (controller.signal.aborted) throw new Error('stream ended by abort');
      // A server or proxy that drops the stream mid-answer ends it without a finish_reason;
      // recording that as a complete turn would hide the loss.
      if (!mapper.finished) throw this.unfinishedError(model, contentType, progress.chunks);
      for (const event of mapper.end()) yield event;
      completed = true;
    } catch (error) {
      // Only a failure that is not ours needs the package's classes to be told apart.
      const errors = isMendError(error) ? undefined : await import('openai/error').catch(() => undefined);
      throw this.toMendError(error, { errors, aborted: req.signal?.aborted === true, idleExpired, timeoutMs, progress });
    } finally {
      disarmIdle();
      req.signal?.removeEventListener('abort', onAbort);
      // A consumer that stops early must not leave the HTTP response open.
      if (!completed) controller.abort();
    }
  }

  /** The base URL as it may be shown: no user info, query or fragment. */
  private get where(): string {
    return displayURL(this.settings.baseURL ?? DEFAULT_OPENAI_BASE_URL);
  }

  private async readCompletion(response: { readBody(maxBytes: number): Promise<{ text: string }> }, model: string): Promise<Record<string, unknown>> {
    const { text } = await response.readBody(MAX_JSON_BODY_BYTES);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const chunk = completionAsChunk(json);
    if (chunk) return chunk;
    const apiMessage = (json as { error?: { message?: unknown } } | undefined)?.error?.message;
    const detail = typeof apiMessage === 'string' ? `an error: ${apiMessage}` : `JSON that is not a chat completion: ${text.slice(0, 200)}`;
    throw new MendError('provider_error', redactSecrets(`model server at ${this.where} answered HTTP 200 with ${detail}`, [this.settings.apiKey]), {
      provider: this.name,
      model,
      status: 200,
      reason: 'bad_response',
      baseURL: this.where,
    });
  }

  private unfinishedError(model: string, contentType: string, chunks: number): MendError {
    const base = { provider: this.name, model, status: undefined, baseURL: this.where };
    if (chunks === 0 && !/event-stream/i.test(contentType)) {
      // An HTML error page from a proxy, a wrong base URL: nothing in it was an event.
      return new MendError(
        'provider_error',
        `model server at ${this.where} answered HTTP 200 with a body that is neither an event stream nor JSON ` +
          `(content-type: ${contentType || 'none'}); check the base URL`,
        { ...base, status: 200, reason: 'bad_response' },
      );
    }
    return new MendError('provider_error', `model stream from ${this.where} ended before the response finished (no finish_reason after ${chunks} chunk(s))`, {
      ...base,
      reason: 'incomplete',
    });
  }

  private requireConfig(): { apiKey: string; model: string } {
    const { apiKey, model } = this.settings;
    const missing = [...(apiKey ? [] : ['apiKey']), ...(model ? [] : ['model'])];
    if (!apiKey || !model) {
      throw new MendError('provider_config_missing', `OpenAI-compatible provider is missing: ${missing.join(', ')}`, {
        provider: this.name,
        missing,
      });
    }
    return { apiKey, model };
  }

  private load(apiKey: string): Promise<ChatStreamTransport> {
    this.transport ??= openTransport(this.settings.transport ?? 'http', {
      apiKey,
      baseURL: this.settings.baseURL ?? DEFAULT_OPENAI_BASE_URL,
      maxRetries: this.settings.maxRetries ?? DEFAULT_MAX_RETRIES,
      timeoutMs: this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
    // A failed import should be retried on the next call rather than cached forever.
    this.transport.catch(() => {
      this.transport = undefined;
    });
    return this.transport;
  }

  private toMendError(
    error: unknown,
    ctx: { errors: OpenAIErrors | undefined; aborted: boolean; idleExpired: boolean; timeoutMs: number; progress: StreamProgress },
  ): MendError {
    if (isMendError(error)) return error;
    if (ctx.aborted) return abortedError();
    const base = { provider: this.name, model: this.model, baseURL: this.where };
    if (ctx.idleExpired) {
      return new MendError('provider_error', `model stream from ${this.where} stalled: no data for ${ctx.timeoutMs} ms`, {
        ...base,
        status: undefined,
        reason: 'idle_timeout',
      });
    }
    const secrets = [this.settings.apiKey];
    const rawMessage = error instanceof Error ? error.message : String(error);
    const message = redactSecrets(rawMessage, secrets);
    const mod = ctx.errors;
    if (mod && error instanceof mod.APIConnectionTimeoutError) {
      return new MendError('provider_error', `model request to ${this.where} timed out after ${ctx.timeoutMs} ms`, {
        ...base,
        status: undefined,
        reason: 'timeout',
      });
    }
    if (mod && error instanceof mod.APIConnectionError) {
      const cause = networkCause(error);
      return new MendError('provider_error', `could not reach the model server at ${this.where}: ${cause ? redactSecrets(cause, secrets) : message}`, {
        ...base,
        status: undefined,
        reason: 'connection',
      });
    }
    if (mod && error instanceof mod.APIError) {
      const status = error.status;
      const prefix = status === undefined ? `model request to ${this.where} failed` : `model request to ${this.where} failed with HTTP ${status}`;
      // The library message already starts with the status; keep only what follows.
      const detail = status === undefined ? message : message.replace(new RegExp(`^${status}\\s*`), '');
      // No `cause`: the original error object can carry request data that we did not redact.
      return new MendError('provider_error', detail ? `${prefix}: ${detail}` : prefix, {
        ...base,
        status,
        reason: 'api',
        ...(typeof error.type === 'string' ? { type: redactSecrets(error.type, secrets) } : {}),
        ...(typeof error.code === 'string' ? { apiCode: redactSecrets(error.code, secrets) } : {}),
      });
    }
    if (ctx.progress.phase === 'stream') {
      // undici says only "terminated"; the socket error under it says why.
      const cause = networkCause(error);
      const why = cause && cause !== message ? `${message}: ${redactSecrets(cause, secrets)}` : message;
      const what = error instanceof SyntaxError ? `sent an event that is not JSON (${why})` : `cut the connection mid-response (${why})`;
      return new MendError('provider_error', `model server at ${this.where} ${what} after ${ctx.progress.chunks} chunk(s)`, {
        ...base,
        status: undefined,
        reason: error instanceof SyntaxError ? 'bad_response' : 'connection_lost',
      });
    }
    return new MendError('provider_error', `model request to ${this.where} failed: ${message}`, { ...base, status: undefined, reason: 'other' });
  }
}

/** Loads the transport's module only: the `openai` package stays unloaded unless it is asked for. */
async function openTransport(kind: ChatTransportKind, settings: ChatTransportSettings): Promise<ChatStreamTransport> {
  if (kind === 'sdk') return (await import('./chat-stream/sdk-chat-stream.js')).sdkChatStream(settings);
  return (await import('./chat-stream/http-chat-stream.js')).httpChatStream(settings);
}

interface StreamProgress {
  phase: 'request' | 'stream';
  chunks: number;
}

function abortedError(): MendError {
  return new MendError('aborted', 'model request aborted');
}
