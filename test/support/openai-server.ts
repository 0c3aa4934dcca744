/**
 * A loopback OpenAI chat-completions server for end-to-end tests of the built CLI.
 *
 * - listens on 127.0.0.1, port 0 (the OS picks one);
 * - records every request (method, url, headers, parsed JSON body);
 * - answers each request with the next canned reply of a FIFO queue: an SSE stream
 *   (text chunks, tool-call deltas with arguments split across chunks, a usage chunk,
 *   `data: [DONE]`), optionally stalling mid-stream until `release()` is called, or an
 *   HTTP error with a JSON body;
 * - a request that finds the queue empty is answered with HTTP 500 and counted in
 *   `unexpected`, so a test can assert the CLI made exactly the requests it expected.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
}

export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  tools?: Array<{ type: 'function'; function: { name: string } }>;
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body text, exactly as received. */
  raw: string;
  body: ChatRequestBody;
}

/** An SSE event: an object is sent as `data: <json>`, a string as `data: <string>` verbatim. */
export type SseEvent = Record<string, unknown> | string;

export interface SseReply {
  type: 'sse';
  events: SseEvent[];
  /** Write this many events, then wait for `release()` before writing the rest. */
  stallAfter?: number;
  /** End with `data: [DONE]` (default true). */
  done?: boolean;
}

export interface HttpErrorReply {
  type: 'http_error';
  status: number;
  body: unknown;
}

export type CannedReply = SseReply | HttpErrorReply;

export interface OpenAIServer {
  /** `http://127.0.0.1:PORT/v1`, for `--base-url`. */
  baseURL: string;
  port: number;
  requests: RecordedRequest[];
  /** Requests that arrived with an empty queue (answered with HTTP 500). */
  readonly unexpected: number;
  enqueue(...replies: CannedReply[]): void;
  /** Resolves once `n` requests have been received. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves once a reply is stalled (now or later). */
  waitForStall(timeoutMs?: number): Promise<void>;
  /** Lets every currently stalled reply continue. */
  release(): void;
  close(): Promise<void>;
}

const MODEL = 'test-model';

export function chunkOf(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-loopback',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: MODEL,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

export function usageChunk(promptTokens: number, completionTokens: number): Record<string, unknown> {
  return {
    id: 'chatcmpl-loopback',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: MODEL,
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** A plain text answer streamed in `chunkSize` pieces, then finish_reason `stop` and a usage chunk. */
export function textReply(text: string, opts: { chunkSize?: number; usage?: [number, number]; stallAfter?: number } = {}): SseReply {
  const [prompt, completion] = opts.usage ?? [20, 5];
  const events: SseEvent[] = [
    chunkOf({ role: 'assistant', content: '' }),
    ...pieces(text, opts.chunkSize ?? 4).map((p) => chunkOf({ content: p })),
    chunkOf({}, 'stop'),
    usageChunk(prompt, completion),
  ];
  return { type: 'sse', events, ...(opts.stallAfter !== undefined ? { stallAfter: opts.stallAfter } : {}) };
}

export interface CannedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * Tool calls as OpenAI streams them: a first delta with index, id and name, then the
 * JSON arguments split across `argPieces` deltas that carry only the index.
 */
export function toolCallReply(calls: CannedCall[], opts: { text?: string; argPieces?: number; usage?: [number, number] } = {}): SseReply {
  const [prompt, completion] = opts.usage ?? [30, 12];
  const events: SseEvent[] = [chunkOf({ role: 'assistant', content: opts.text ?? null })];
  calls.forEach((call, index) => {
    events.push(chunkOf({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    const args = JSON.stringify(call.args);
    const size = Math.max(1, Math.ceil(args.length / (opts.argPieces ?? 3)));
    for (const piece of pieces(args, size)) events.push(chunkOf({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  events.push(chunkOf({}, 'tool_calls'), usageChunk(prompt, completion));
  return { type: 'sse', events };
}

export function errorReply(status: number, body: unknown): HttpErrorReply {
  return { type: 'http_error', status, body };
}

async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A request handler of its own, for tests that shape the HTTP answer themselves (every request goes to it). */
export type RequestHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

export function sendChunk(res: ServerResponse, chunk: unknown): void {
  res.write(`data: ${JSON.stringify(chunk)}\n\n`);
}

/** Writes a whole SSE response: each chunk, then `[DONE]`. */
export function sendSse(res: ServerResponse, chunks: unknown[]): void {
  startSse(res);
  for (const chunk of chunks) sendChunk(res, chunk);
  res.write('data: [DONE]\n\n');
  res.end();
}

/**
 * The one fake OpenAI-compatible server of the test suite: canned replies from a FIFO
 * (`enqueue`), or, given a handler, every request answered by it.
 */
export async function startOpenAIServer(handler?: RequestHandler): Promise<OpenAIServer> {
  const requests: RecordedRequest[] = [];
  const queue: CannedReply[] = [];
  let unexpected = 0;
  let stalls = 0;
  let releaseGate: () => void = () => {};
  let gate = new Promise<void>((r) => (releaseGate = r));

  const write = (res: ServerResponse, event: SseEvent) => res.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);

  const reply = async (canned: CannedReply, res: ServerResponse): Promise<void> => {
    if (canned.type === 'http_error') {
      const text = JSON.stringify(canned.body);
      res.writeHead(canned.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const [i, event] of canned.events.entries()) {
      if (canned.stallAfter === i) {
        stalls += 1;
        const closed = new Promise<void>((r) => res.once('close', () => r()));
        await Promise.race([gate, closed]);
        if (res.destroyed || res.writableEnded) return;
      }
      write(res, event);
    }
    if (canned.stallAfter !== undefined && canned.stallAfter >= canned.events.length) {
      stalls += 1;
      await Promise.race([gate, new Promise<void>((r) => res.once('close', () => r()))]);
      if (res.destroyed) return;
    }
    if (canned.done !== false) res.write('data: [DONE]\n\n');
    res.end();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: ChatRequestBody;
      try {
        body = JSON.parse(raw) as ChatRequestBody;
      } catch {
        body = { model: '', messages: [] };
      }
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, body };
      requests.push(recorded);
      if (handler) {
        void Promise.resolve(handler(recorded, res)).catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
        return;
      }
      const canned = queue.shift();
      if (!canned) {
        unexpected += 1;
        const text = JSON.stringify({ error: { message: 'loopback server: no canned reply left', type: 'server_error' } });
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(text);
        return;
      }
      reply(canned, res).catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    get unexpected() {
      return unexpected;
    },
    enqueue: (...replies) => void queue.push(...replies),
    waitForRequests: (n, timeoutMs = 45_000) => waitUntil(() => requests.length >= n, timeoutMs, `${n} request(s)`),
    waitForStall: (timeoutMs = 45_000) => waitUntil(() => stalls > 0, timeoutMs, 'a stalled reply'),
    release() {
      releaseGate();
      gate = new Promise<void>((r) => (releaseGate = r));
    },
    close: () =>
      new Promise<void>((resolve) => {
        releaseGate();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How often each tool-call id appears in a request: as an assistant tool_call and as a tool message. */
export function callIdCounts(body: ChatRequestBody): Map<string, { calls: number; results: number }> {
  const counts = new Map<string, { calls: number; results: number }>();
  const entry = (id: string) => {
    let e = counts.get(id);
    if (!e) counts.set(id, (e = { calls: 0, results: 0 }));
    return e;
  };
  for (const m of body.messages) {
    for (const c of m.tool_calls ?? []) entry(c.id).calls += 1;
    if (m.role === 'tool' && m.tool_call_id !== undefined) entry(m.tool_call_id).results += 1;
  }
  return counts;
}

/** Occurrences of `needle` across every message's content (and tool-call arguments). */
export function countInMessages(body: ChatRequestBody, needle: string): number {
  let n = 0;
  for (const m of body.messages) {
    const texts = [typeof m.content === 'string' ? m.content : '', ...(m.tool_calls ?? []).map((c) => c.function.arguments)];
    for (const t of texts) n += t.split(needle).length - 1;
  }
  return n;
}
