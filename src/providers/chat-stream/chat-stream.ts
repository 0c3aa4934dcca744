/**
 * How a chat-completions request reaches the server and its answer comes back: one small
 * interface with two implementations. `http` (the default) is node's own HTTP client with
 * eventsource-parser; `sdk` is the `openai` package over fetch, kept as the oracle the
 * first is tested against (`MEND_OPENAI_TRANSPORT=sdk` switches to it). Under load the
 * package's fetch, web streams and request building cost about 2.7 ms of CPU a streamed
 * call against about 0.6 ms for the plain client (600 calls at 200 at once, measured on
 * the 2-core bench machine), and a daemon makes hundreds of calls at once.
 *
 * Both throw the `openai` package's own error classes (APIError, APIConnectionError,
 * APIConnectionTimeoutError) under the same rules (its retries, its messages), so the
 * provider maps a failure the same way whichever transport met it. The provider imports
 * the one it uses (openai-provider.ts), on its first model call.
 */

export type ChatTransportKind = 'http' | 'sdk';
export const CHAT_TRANSPORT_KINDS: readonly ChatTransportKind[] = ['http', 'sdk'];

export interface ChatTransportSettings {
  apiKey: string;
  baseURL: string;
  /** Retries of a failed request (connection errors, timeouts, 408/409/429/5xx). */
  maxRetries: number;
  /** Limit for the response headers to arrive, per attempt. */
  timeoutMs: number;
}

export interface ChatStreamResponse {
  contentType: string;
  /** The stream's events, each parsed as JSON; ends quietly at `[DONE]` or at the end of the body. */
  chunks: AsyncIterable<unknown>;
  /** At most `maxBytes` of the body as text, for a server that answered one JSON document. */
  readBody(maxBytes: number): Promise<{ text: string; truncated: boolean }>;
}

export interface ChatStreamTransport {
  /** POSTs `body` to `{baseURL}/chat/completions`; resolves once a 2xx answer's headers arrived. */
  open(body: Record<string, unknown>, options: { signal: AbortSignal }): Promise<ChatStreamResponse>;
}
