/**
 * A real loopback HTTP server that speaks just enough of the chat-completions SSE
 * protocol for provider tests. Every request body is recorded for assertions.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface ChatServer {
  baseURL: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startChatServer(handler: Handler): Promise<ChatServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text ? (JSON.parse(text) as unknown) : undefined,
      };
      requests.push(recorded);
      void Promise.resolve(handler(recorded, res)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

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

/** A chat.completion.chunk with the usual envelope around one choice delta. */
export function chunkOf(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

export function usageChunk(prompt: number, completion: number): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'test-model',
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}
