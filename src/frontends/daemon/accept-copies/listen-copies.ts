/**
 * More accepts per loop iteration for a listening server: copies of its socket.
 *
 * libuv (1.45 and later, node 20's) accepts one connection each time the loop polls a
 * listening descriptor, once per iteration. A daemon whose iterations take tens of
 * milliseconds under load then accepts a few dozen connections a second, and a client's
 * new connection waits seconds in the kernel's queue before any of its bytes are read
 * (measured: 200 sessions subscribing at once waited up to 9 s, with the loop's own
 * delay under 0.1 s). Each copy of the descriptor (dup'd: the same socket, the same
 * queue) is polled on its own, so N copies accept up to N + 1 connections an iteration.
 *
 * Node 20 has no way to dup a descriptor or to bind a port twice (`reusePort` came in
 * node 22.12), but passing a handle to another process over IPC gives a new descriptor
 * for the same socket (SCM_RIGHTS). So a child process echoes the server's handle back N
 * times and exits; every copy hands its connections to the server as its own. The child
 * lives only while the copies are made (tens of milliseconds at start-up). Without the
 * copies (the switch: MEND_ACCEPT_COPIES=0, read in src/cli) the server accepts as node
 * does by itself: the oracle, with the same connections, only accepted more slowly.
 */
import { spawn } from 'node:child_process';
import type { Server, Socket } from 'node:net';

/** The child: sends every handle it is given straight back, closes its own descriptor, exits when disconnected. */
const ECHO = `process.on('message', (m, h) => process.send(m, h, () => h && h.close && h.close()));
process.on('disconnect', () => process.exit(0));`;

export interface ListenCopies {
  /** How many copies of the socket are being polled. */
  readonly count: number;
  /** Stops polling the copies (the server's own descriptor is the server's to close). */
  close(): void;
}

const NONE: ListenCopies = { count: 0, close: () => undefined };

/**
 * Polls `count` copies of `server`'s listening socket; each connection a copy accepts is
 * the server's (`connection` event). Call once the server listens. A failure to make the
 * copies (no IPC, a platform that cannot pass the handle) leaves the server as it was and
 * is reported to `note`.
 */
export async function listenCopies(server: Server, count: number, note: (message: string) => void): Promise<ListenCopies> {
  if (count <= 0) return NONE;
  const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  const copies: Server[] = [];
  try {
    for (let i = 0; i < count; i++) copies.push(await echoed(child, server, i));
  } catch (error) {
    for (const copy of copies) copy.close();
    note(`accepting on one descriptor: copies of the listening socket could not be made (${(error as Error).message})`);
    return NONE;
  } finally {
    if (child.connected) child.disconnect();
    child.unref();
  }
  const forward = (socket: Socket): void => void server.emit('connection', socket);
  // An accept that fails on a copy (EMFILE, say) fails on the server's own descriptor too: told, not thrown.
  const failed = (error: Error): void => note(`accepting a connection failed: ${error.message}`);
  for (const copy of copies) copy.on('connection', forward).on('error', failed);
  return {
    count: copies.length,
    close: () => {
      for (const copy of copies) copy.close();
    },
  };
}

function echoed(child: ReturnType<typeof spawn>, server: Server, i: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`the helper exited (${code})`));
    const onError = (error: Error): void => reject(error);
    child.once('exit', onExit);
    child.once('error', onError);
    child.once('message', (_message: unknown, handle: unknown) => {
      child.off('exit', onExit);
      child.off('error', onError);
      if (handle && typeof (handle as Server).on === 'function' && typeof (handle as Server).close === 'function') resolve(handle as Server);
      else reject(new Error('the helper sent back no server handle'));
    });
    child.send({ copy: i }, server, (error) => {
      if (error) reject(error);
    });
  });
}
