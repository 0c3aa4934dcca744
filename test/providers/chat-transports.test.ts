/**
 * The two chat transports side by side: node's HTTP client (the default) must do what the
 * `openai` package (its oracle) does on the same server behaviour: the same events, the
 * same failure (code, reason, status, message), the same number of requests (retries).
 */
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import { CHAT_TRANSPORT_KINDS, type ChatTransportKind } from '../../src/providers/chat-stream/chat-stream.js';
import { defaultRetryDelayMs, retryDelayMs, shouldRetry } from '../../src/providers/chat-stream/retry-policy.js';
import { OpenAIProvider } from '../../src/providers/openai-provider.js';
import type { ProviderEvent } from '../../src/providers/provider.js';
import { chunkOf, sendSse, startOpenAIServer, startSse, usageChunk, type OpenAIServer, type RecordedRequest } from '../support/openai-server.js';

const KEY = 'sk-test-SECRET';
const servers: OpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type Outcome =
  | { events: ProviderEvent[]; requests: number }
  | { error: { code: string; reason: unknown; status: unknown; message: string; type?: unknown; apiCode?: unknown }; requests: number };

type Handler = (req: RecordedRequest, res: ServerResponse, attempt: number) => void;

/** Runs one model call over `transport` against a fresh server answering with `handler`. */
async function run(
  transport: ChatTransportKind,
  handler: Handler,
  settings: { maxRetries?: number; timeoutMs?: number } = {},
  signal?: AbortSignal,
): Promise<Outcome> {
  let attempt = 0;
  const server = await startOpenAIServer((req, res) => handler(req, res, attempt++));
  servers.push(server);
  const provider = new OpenAIProvider({ apiKey: KEY, baseURL: server.baseURL, model: 'm', maxRetries: 0, timeoutMs: 5_000, transport, ...settings });
  const events: ProviderEvent[] = [];
  try {
    for await (const event of provider.stream({ history: [{ role: 'user', parts: [{ text: 'q' }] }], tools: [], ...(signal ? { signal } : {}) })) {
      events.push(event);
    }
    return { events, requests: server.requests.length };
  } catch (error) {
    if (!isMendError(error)) throw error;
    const { reason, status, type, apiCode } = error.details ?? {};
    // The URL differs between the two servers; the rest of the message must not.
    const message = error.message.replaceAll(server.baseURL, '<url>');
    return { error: { code: error.code, reason, status, message, type, apiCode }, requests: server.requests.length };
  }
}

async function both(handler: Handler, settings: { maxRetries?: number; timeoutMs?: number } = {}): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const transport of CHAT_TRANSPORT_KINDS) outcomes.push(await run(transport, handler, settings));
  return outcomes;
}

const answer = (res: ServerResponse): void => sendSse(res, [chunkOf({ content: 'ok' }), chunkOf({}, 'stop'), usageChunk(1, 1)]);
/** The failure the provider reports for an API error (an HTTP status, or an error event when `status` is undefined). */
const apiFailure = (status: number | undefined, message: string, type?: string, apiCode?: string) => ({
  code: 'provider_error',
  reason: 'api',
  status,
  message,
  type,
  apiCode,
});

const okEvents: ProviderEvent[] = [
  { type: 'text_delta', text: 'ok' },
  { type: 'finish', stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 } },
];

function fail(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}

describe('the HTTP transport does what the openai package does', () => {
  it('retries 5xx answers and then streams the answer', async () => {
    const [http, sdk] = await both(
      (_req, res, attempt) => (attempt < 2 ? fail(res, 503, '{"error":{"message":"busy"}}', { 'retry-after-ms': '5' }) : answer(res)),
      {
        maxRetries: 2,
      },
    );
    expect(http).toEqual({ events: okEvents, requests: 3 });
    expect(sdk).toEqual(http);
  });

  it('gives up after the last retry with the server error', async () => {
    const [http, sdk] = await both((_req, res) => fail(res, 500, '{"error":{"message":"boom","type":"server_error"}}', { 'retry-after': '0.005' }), {
      maxRetries: 1,
    });
    expect(http).toEqual({
      error: apiFailure(500, 'model request to <url> failed with HTTP 500: boom', 'server_error'),
      requests: 2,
    });
    expect(sdk).toEqual(http);
  });

  it('obeys x-should-retry: false, and does not retry a 400', async () => {
    const outcomes = [
      ...(await both((_req, res) => fail(res, 429, '{"error":{"message":"slow down"}}', { 'x-should-retry': 'false' }), { maxRetries: 2 })),
      ...(await both((_req, res) => fail(res, 400, `{"error":{"message":"bad ${KEY}","type":"invalid_request_error","code":"bad_param"}}`), { maxRetries: 2 })),
    ];
    expect(outcomes[0]).toMatchObject({ error: { status: 429, message: 'model request to <url> failed with HTTP 429: slow down' }, requests: 1 });
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]).toEqual({
      error: apiFailure(400, 'model request to <url> failed with HTTP 400: bad [redacted]', 'invalid_request_error', 'bad_param'),
      requests: 1,
    });
    expect(outcomes[3]).toEqual(outcomes[2]);
  });

  it('reports a body that is not JSON, or no body at all, as the package does', async () => {
    const text = await both((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such route');
    });
    expect(text[0]).toMatchObject({ error: { status: 404, message: 'model request to <url> failed with HTTP 404: no such route' } });
    expect(text[1]).toEqual(text[0]);
    const empty = await both((_req, res) => {
      res.writeHead(401);
      res.end();
    });
    expect(empty[0]).toMatchObject({ error: { status: 401, message: 'model request to <url> failed with HTTP 401: status code (no body)' } });
    expect(empty[1]).toEqual(empty[0]);
  });

  it('times out a server that never answers, after its retries', async () => {
    const [http, sdk] = await both(() => undefined, { maxRetries: 1, timeoutMs: 150 });
    expect(http).toEqual({
      error: {
        code: 'provider_error',
        reason: 'timeout',
        status: undefined,
        message: 'model request to <url> timed out after 150 ms',
        type: undefined,
        apiCode: undefined,
      },
      requests: 2,
    });
    expect(sdk).toEqual(http);
  });

  it('throws an event that carries an error, mid-stream', async () => {
    const [http, sdk] = await both((_req, res) => {
      startSse(res);
      res.write(`data: ${JSON.stringify(chunkOf({ content: 'par' }))}\n\n`);
      res.write(`data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n`);
      res.end();
    });
    expect(http).toEqual({
      error: apiFailure(undefined, 'model request to <url> failed: overloaded', 'server_error'),
      requests: 1,
    });
    expect(sdk).toEqual(http);
  });

  it('reads a compressed stream, ignores what follows [DONE], and fails on an event that is not JSON', async () => {
    const [http, sdk] = await both((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      const events = [chunkOf({ content: 'ok' }), chunkOf({}, 'stop'), usageChunk(1, 1)].map((c) => `data: ${JSON.stringify(c)}\n\n`).join('');
      res.end(gzipSync(`${events}data: [DONE]\n\ndata: ${JSON.stringify(chunkOf({ content: 'late' }))}\n\n`));
    });
    expect(http).toEqual({ events: okEvents, requests: 1 });
    expect(sdk).toEqual(http);

    const bad = await both((_req, res) => {
      startSse(res);
      res.end('data: {"choices": [\n\n');
    });
    expect(bad[0]).toMatchObject({ error: { code: 'provider_error', reason: 'bad_response' } });
    expect(bad[1]).toMatchObject({ error: { code: 'provider_error', reason: 'bad_response' } });
  });

  it('sends the same request body, with the key as a bearer token', async () => {
    const bodies: string[] = [];
    const auth: unknown[] = [];
    await both((req, res) => {
      bodies.push(req.raw);
      auth.push(req.headers.authorization);
      answer(res);
    });
    expect(JSON.parse(bodies[0]!)).toEqual(JSON.parse(bodies[1]!));
    expect(auth).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  });

  it('an abort while waiting to retry ends the call at once', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const outcome = await run(
      'http',
      (_req, res) => {
        fail(res, 503, '{}', { 'retry-after': '30' });
        setTimeout(() => controller.abort(), 50);
      },
      { maxRetries: 2 },
      controller.signal,
    );
    expect(outcome).toMatchObject({ error: { code: 'aborted' }, requests: 1 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('retry policy (the package v6 rules)', () => {
  it('retries what the package retries', () => {
    expect([408, 409, 429, 500, 503, 400, 401, 404, 422].map((s) => shouldRetry(s, undefined))).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(shouldRetry(400, 'true')).toBe(true);
    expect(shouldRetry(503, 'false')).toBe(false);
  });

  it('waits what the server asks, else backs off from 0.5 s to 8 s with up to a quarter of jitter', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryDelayMs({ retryAfterMs: '250' }, 2, 2, now)).toBe(250);
    expect(retryDelayMs({ retryAfter: '3' }, 2, 2, now)).toBe(3000);
    expect(retryDelayMs({ retryAfter: 'Thu, 01 Jan 2026 00:00:05 GMT' }, 2, 2, now)).toBe(5000);
    expect(retryDelayMs({ retryAfter: 'Wed, 31 Dec 2025 00:00:00 GMT' }, 2, 2, now)).toBe(0);
    expect(defaultRetryDelayMs(2, 2, () => 0)).toBe(500);
    expect(defaultRetryDelayMs(1, 2, () => 0)).toBe(1000);
    expect(defaultRetryDelayMs(1, 10, () => 0)).toBe(8000);
    expect(defaultRetryDelayMs(2, 2, () => 1)).toBe(375);
  });
});
