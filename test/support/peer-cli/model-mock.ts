/**
 * A loopback stand-in for a vendor's model API, for driving the real Claude Code, Codex and
 * Gemini CLIs offline. It records every request (method, url, raw body, parsed JSON) and lets
 * the caller's `answer` function choose each reply from what was asked; the vendor-specific
 * encoders (anthropic-sse.ts, responses-sse.ts, gemini-sse.ts) build the replies.
 *
 * Listens on 127.0.0.1 only, port chosen by the OS.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  raw: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

/** One server-sent event; `data` objects are sent as JSON. */
export interface SseFrame {
  event?: string;
  data: unknown;
}

export type MockReply = { kind: 'sse'; frames: SseFrame[] } | { kind: 'json'; status?: number; body: unknown } | { kind: 'empty'; status: number };

export type AnswerFn = (request: MockRequest, index: number) => MockReply;

export interface ModelMock {
  /** `http://127.0.0.1:PORT` (no path). */
  origin: string;
  requests: MockRequest[];
  /** Resolves once `predicate` holds for some recorded request. */
  waitFor(predicate: (r: MockRequest) => boolean, timeoutMs: number, what: string): Promise<MockRequest>;
  close(): Promise<void>;
}

function encodeFrame(frame: SseFrame): string {
  const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
  return `${frame.event !== undefined ? `event: ${frame.event}\n` : ''}data: ${data}\n\n`;
}

export async function startModelMock(answer: AnswerFn): Promise<ModelMock> {
  const requests: MockRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw === '' ? undefined : (JSON.parse(raw) as unknown);
      } catch {
        body = undefined;
      }
      const recorded: MockRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, body };
      const index = requests.push(recorded) - 1;
      let reply: MockReply;
      try {
        reply = answer(recorded, index);
      } catch (error) {
        reply = { kind: 'json', status: 500, body: { error: { message: String(error) } } };
      }
      if (reply.kind === 'empty') {
        res.writeHead(reply.status);
        res.end();
      } else if (reply.kind === 'json') {
        const text = JSON.stringify(reply.body);
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(reply.frames.map(encodeFrame).join(''));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    async waitFor(predicate, timeoutMs, what) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = requests.find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`model mock: timed out after ${timeoutMs} ms waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
