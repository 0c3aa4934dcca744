/**
 * Output flow control for the stdio front ends: while stdout's buffer is full (a host that
 * stopped reading), the engine waits between streamed events instead of buffering without
 * end. A stop signal ends the wait.
 */
import type { Writable } from 'node:stream';

export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

export function stdoutBackpressure(stdout: Writable, signal: AbortSignal): () => Promise<void> | undefined {
  return () =>
    stdout.writableNeedDrain && !stdout.destroyed
      ? Promise.race([new Promise<void>((resolve) => stdout.once('drain', () => resolve())), aborted(signal)])
      : undefined;
}
