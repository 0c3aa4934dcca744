/**
 * Where a session's event stream writes its frames. hono's `streamSSE` (the simple path,
 * and the oracle) passes every write through a web TransformStream and a reader that
 * copies it into node's response: a few promise hops and an encode per write, and under
 * load (200 sessions streaming at once) a tenth of the daemon's loop. Served by node, the
 * route can write to node's response itself, with the same headers, the same bytes and the
 * same backpressure (a write waits for `drain`), and tell hono the answer is already sent.
 * Off switch: `MEND_SSE_DIRECT=0` (or any server that is not node's).
 */
import { ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';

export interface SseSink {
  /** Writes frames as they are; resolves once they are handed on (after `drain` when the socket is full). */
  write(text: string): Promise<void>;
  /** True once the client went away. */
  readonly aborted: boolean;
  onAbort(listener: () => void): void;
}

export type SseRun = (sink: SseSink) => Promise<void>;

/** Answers `c` with an event stream that `run` writes; `onError` hears what `run` throws. */
export function sseResponse(c: Context, direct: boolean, run: SseRun, onError: (error: unknown) => void): Response {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  if (direct && outgoing instanceof ServerResponse) return directResponse(c, outgoing, run, onError);
  return streamSSE(c, async (stream) => {
    const sink: SseSink = {
      write: (text) => stream.write(text).then(() => undefined),
      get aborted() {
        return stream.aborted;
      },
      onAbort: (listener) => stream.onAbort(listener),
    };
    await run(sink).catch(onError);
  });
}

function directResponse(c: Context, res: ServerResponse, run: SseRun, onError: (error: unknown) => void): Response {
  // The headers streamSSE sets, after those the route set.
  c.header('Transfer-Encoding', 'chunked');
  c.header('Content-Type', 'text/event-stream');
  c.header('Cache-Control', 'no-cache');
  c.header('Connection', 'keep-alive');
  const headers: Record<string, string> = {};
  for (const [name, value] of c.newResponse(null).headers) headers[name] = value;
  res.writeHead(200, headers);
  res.flushHeaders();

  let aborted = false;
  const listeners: Array<() => void> = [];
  res.once('close', () => {
    if (res.writableFinished) return;
    aborted = true;
    for (const listener of listeners.splice(0)) listener();
  });
  const sink: SseSink = {
    write(text) {
      if (aborted || res.destroyed || res.writableEnded) return Promise.resolve();
      if (res.write(text)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    },
    get aborted() {
      return aborted;
    },
    onAbort(listener) {
      if (aborted) listener();
      else listeners.push(listener);
    },
  };
  void run(sink)
    .catch(onError)
    .finally(() => {
      if (!res.writableEnded) res.end();
    });
  return RESPONSE_ALREADY_SENT;
}
