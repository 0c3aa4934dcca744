/**
 * Copies of a listening socket: a loop that is busy between polls accepts one connection
 * an iteration on node's own descriptor (libuv 1.45+), and up to one per copy more with
 * copies. Iterations are counted, not timed: each one is a poll followed by a busy
 * setImmediate callback, and every connection records the iteration that accepted it.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listenCopies, type ListenCopies } from '../../../src/frontends/daemon/accept-copies/listen-copies.js';

const CLIENTS = 30;

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const done of cleanup.splice(0)) done();
});

async function listening(): Promise<{ server: Server; port: number; accepted: Socket[] }> {
  const accepted: Socket[] = [];
  const server = createServer((socket) => {
    accepted.push(socket);
    socket.end('hello\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => server.close());
  return { server, port: (server.address() as { port: number }).port, accepted };
}

/** Connects CLIENTS at once while the loop is busy; how many connections each iteration accepted, and what the clients read. */
async function acceptedPerIteration(server: Server, port: number): Promise<{ perIteration: number[]; replies: string[] }> {
  let iteration = 0;
  const perIteration: number[] = [];
  server.prependListener('connection', () => {
    perIteration[iteration] = (perIteration[iteration] ?? 0) + 1;
  });
  let busy = true;
  const spin = (): void => {
    if (!busy) return;
    iteration += 1;
    const until = performance.now() + 5;
    while (performance.now() < until) {
      // A loop busy between polls, as a loaded daemon's is.
    }
    setImmediate(spin);
  };
  const replies = Promise.all(
    Array.from(
      { length: CLIENTS },
      () =>
        new Promise<string>((resolve, reject) => {
          let text = '';
          connect(port, '127.0.0.1')
            .setEncoding('utf8')
            .on('data', (chunk: string) => (text += chunk))
            .on('end', () => resolve(text))
            .on('error', reject);
        }),
    ),
  );
  setImmediate(spin);
  try {
    const texts = await replies;
    return { perIteration: perIteration.filter((n) => n !== undefined), replies: texts };
  } finally {
    busy = false;
  }
}

describe('copies of the listening socket', () => {
  it('without copies (node as it is, the oracle): one connection an iteration, every one served', async () => {
    const { server, port, accepted } = await listening();
    const { perIteration, replies } = await acceptedPerIteration(server, port);
    expect(replies).toEqual(Array(CLIENTS).fill('hello\n'));
    expect(accepted).toHaveLength(CLIENTS);
    expect(Math.max(...perIteration)).toBe(1);
  });

  it('with copies: several connections an iteration, the same connections served by the same server', async () => {
    const { server, port, accepted } = await listening();
    const notes: string[] = [];
    const copies: ListenCopies = await listenCopies(server, 4, (m) => notes.push(m));
    cleanup.push(() => copies.close());
    expect(notes).toEqual([]);
    expect(copies.count).toBe(4);
    const { perIteration, replies } = await acceptedPerIteration(server, port);
    expect(replies).toEqual(Array(CLIENTS).fill('hello\n'));
    expect(accepted).toHaveLength(CLIENTS);
    expect(Math.max(...perIteration)).toBeGreaterThan(1);
    expect(Math.max(...perIteration)).toBeLessThanOrEqual(5);
    // Fewer iterations than connections: the point of the copies.
    expect(perIteration.length).toBeLessThan(CLIENTS);
  });

  it('closed copies stop accepting; the server keeps its own descriptor', async () => {
    const { server, port } = await listening();
    const copies = await listenCopies(server, 3, () => undefined);
    copies.close();
    const { perIteration, replies } = await acceptedPerIteration(server, port);
    expect(replies).toEqual(Array(CLIENTS).fill('hello\n'));
    expect(Math.max(...perIteration)).toBe(1);
  });

  it('0 copies: nothing is made', async () => {
    const { server } = await listening();
    const copies = await listenCopies(server, 0, () => undefined);
    expect(copies.count).toBe(0);
    copies.close();
  });
});
