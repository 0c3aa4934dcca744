/**
 * The direct event-stream sink against hono's streamSSE (its oracle), both served by
 * @hono/node-server on loopback as the daemon serves them: the same status, headers and
 * bytes; a client that goes away is heard by both; a client that stops reading holds the
 * writer back (backpressure) instead of filling memory.
 */
import { request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { sseFrame } from '../../../src/frontends/daemon/sse-frames.js';
import { sseResponse, type SseRun } from '../../../src/frontends/daemon/sse-sink.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

async function serve(direct: boolean, run: SseRun, onError: (error: unknown) => void = () => undefined): Promise<string> {
  const app = new Hono();
  app.get('/events', (c) => {
    c.header('x-stream', 'one');
    return sseResponse(c, direct, run, onError);
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
}

function get(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => request(url, resolve).on('error', reject).end());
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += (chunk as Buffer).toString('utf8');
  return text;
}

const frames = [sseFrame({ id: '1', event: 'a', data: '{"x":1}' }), `: heartbeat\n\n`, sseFrame({ id: '2', event: 'b', data: 'two\nlines' })];

describe.each([true, false])('sseResponse (direct: %s)', (direct) => {
  it('sends the route headers, the event-stream headers and every frame as written', async () => {
    const url = await serve(direct, async (sink) => {
      for (const frame of frames) await sink.write(frame);
    });
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'transfer-encoding': 'chunked',
      'x-stream': 'one',
    });
    expect(await readAll(res)).toBe(frames.join(''));
  });

  it('tells the writer when the client goes away', async () => {
    let heard!: () => void;
    const aborted = new Promise<void>((resolve) => (heard = resolve));
    let sawAborted = false;
    const url = await serve(direct, async (sink) => {
      sink.onAbort(() => heard());
      await sink.write(frames[0]!);
      await aborted;
      sawAborted = sink.aborted;
    });
    const res = await get(url);
    await new Promise((resolve) => res.once('data', resolve));
    res.destroy();
    await aborted;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sawAborted).toBe(true);
  });

  it('reports what the writer throws and still ends the response', async () => {
    const errors: unknown[] = [];
    const url = await serve(
      direct,
      async (sink) => {
        await sink.write(frames[0]!);
        throw new Error('broken');
      },
      (error) => errors.push(error),
    );
    const text = await readAll(await get(url));
    expect(text.startsWith(frames[0]!)).toBe(true);
    expect(errors).toEqual([expect.objectContaining({ message: 'broken' })]);
  });
});

describe('the direct sink under a client that does not read', () => {
  it('holds the writer back once the socket is full, and lets it go when the client reads', async () => {
    const block = `data: ${'x'.repeat(64 * 1024)}\n\n`;
    let written = 0;
    let finished = false;
    const url = await serve(true, async (sink) => {
      for (let i = 0; i < 600; i++) {
        await sink.write(block);
        written += 1;
      }
      finished = true;
    });
    const res = await get(url);
    res.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // 600 blocks are 39 MB: far more than the socket buffers (a few MB on loopback) hold while nobody reads.
    expect(written).toBeLessThan(300);
    res.resume();
    const text = await readAll(res);
    expect(finished).toBe(true);
    expect(text.length).toBe(600 * block.length);
  });
});
