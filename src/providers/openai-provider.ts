/**
 * OpenAI-compatible chat completions, streamed. The `openai` package does SSE parsing,
 * retries and the request timeout; it is imported on the first model call only, so
 * commands that never talk to a model do not pay for loading it.
 */
import type OpenAI from 'openai';
import { MendError, isMendError } from '../errors.js';
import { ChatChunkMapper } from './openai-chunks.js';
import { toChatMessages, toChatTools } from './openai-messages.js';
import type { ModelProvider, ModelRequest, ProviderEvent } from './provider.js';
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
}

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
const DEFAULT_TIMEOUT_MS = 300_000;
const DEFAULT_MAX_RETRIES = 2;

type OpenAIModule = typeof import('openai');

interface LoadedClient {
  client: OpenAI;
  module: OpenAIModule;
}

export class OpenAIProvider implements ModelProvider {
  readonly name = 'openai';
  private loaded: Promise<LoadedClient> | undefined;

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

    let loaded: LoadedClient | undefined;
    let completed = false;
    try {
      loaded = await this.load(apiKey);
      const stream = await loaded.client.chat.completions.create(
        {
          model,
          messages,
          stream: true,
          stream_options: { include_usage: true },
          // Some compatible servers reject an empty tools array.
          ...(tools.length > 0 ? { tools } : {}),
        },
        { signal: controller.signal, timeout: timeoutMs },
      );
      const mapper = new ChatChunkMapper();
      armIdle();
      for await (const chunk of stream) {
        // Time spent by the consumer between pulls is not server silence.
        disarmIdle();
        for (const event of mapper.map(chunk)) yield event;
        armIdle();
      }
      disarmIdle();
      // The library ends iteration quietly when its signal aborts; that is not a finished response.
      if (controller.signal.aborted) throw new Error('stream ended by abort');
      // A server or proxy that drops the stream mid-answer ends it without a finish_reason;
      // recording that as a complete turn would hide the loss.
      if (!mapper.finished) {
        throw new MendError('provider_error', 'model stream ended before the response finished', {
          provider: this.name,
          model,
          status: undefined,
          reason: 'incomplete',
        });
      }
      for (const event of mapper.end()) yield event;
      completed = true;
    } catch (error) {
      throw this.toMendError(error, { loaded, aborted: req.signal?.aborted === true, idleExpired, timeoutMs });
    } finally {
      disarmIdle();
      req.signal?.removeEventListener('abort', onAbort);
      // A consumer that stops early must not leave the HTTP response open.
      if (!completed) controller.abort();
    }
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

  private load(apiKey: string): Promise<LoadedClient> {
    this.loaded ??= import('openai').then((module) => ({
      module,
      client: new module.OpenAI({
        apiKey,
        // Every option is passed explicitly so the library never falls back to OPENAI_* variables:
        // settings reach mend's modules only through their callers.
        baseURL: this.settings.baseURL ?? DEFAULT_OPENAI_BASE_URL,
        organization: null,
        project: null,
        adminAPIKey: null,
        webhookSecret: null,
        maxRetries: this.settings.maxRetries ?? DEFAULT_MAX_RETRIES,
        timeout: this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        // Errors reach the user through MendError; the library must not print to our stderr.
        logLevel: 'off',
      }),
    }));
    // A failed import should be retried on the next call rather than cached forever.
    this.loaded.catch(() => {
      this.loaded = undefined;
    });
    return this.loaded;
  }

  private toMendError(
    error: unknown,
    ctx: { loaded: LoadedClient | undefined; aborted: boolean; idleExpired: boolean; timeoutMs: number },
  ): MendError {
    if (isMendError(error)) return error;
    if (ctx.aborted) return abortedError();
    const base = { provider: this.name, model: this.model };
    if (ctx.idleExpired) {
      return new MendError('provider_error', `model stream stalled: no data for ${ctx.timeoutMs} ms`, {
        ...base,
        status: undefined,
        reason: 'idle_timeout',
      });
    }
    const secrets = [this.settings.apiKey];
    const rawMessage = error instanceof Error ? error.message : String(error);
    const message = redactSecrets(rawMessage, secrets);
    const mod = ctx.loaded?.module;
    if (mod && error instanceof mod.APIConnectionTimeoutError) {
      return new MendError('provider_error', `model request timed out after ${ctx.timeoutMs} ms`, {
        ...base,
        status: undefined,
        reason: 'timeout',
      });
    }
    if (mod && error instanceof mod.APIConnectionError) {
      return new MendError('provider_error', `could not reach the model server: ${message}`, {
        ...base,
        status: undefined,
        reason: 'connection',
      });
    }
    if (mod && error instanceof mod.APIError) {
      const status = error.status;
      const prefix = status === undefined ? 'model request failed' : `model request failed with HTTP ${status}`;
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
    return new MendError('provider_error', `model request failed: ${message}`, { ...base, status: undefined, reason: 'other' });
  }
}

function abortedError(): MendError {
  return new MendError('aborted', 'model request aborted');
}
