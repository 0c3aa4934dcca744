/**
 * Foreground shell commands on worker threads, for a process that serves many sessions
 * (the daemon): starting a process blocks the thread that starts it until the child has
 * exec'd, which on one event loop holds up every other session. The commands run
 * exactly as inline (runForegroundCommand, the oracle: `MEND_SHELL_WORKERS=0` keeps
 * them inline); only the thread differs. An abort is passed on to the worker, which
 * kills the command's process group as the inline path does.
 *
 * Workers start on first use; `close` ends them (the host calls it once its sessions are
 * closed). A worker that fails answers its running calls with an error outcome and is
 * replaced.
 */
import { Worker } from 'node:worker_threads';
import { errorOutcome, ToolErrorType, type ForegroundCommand, type ShellRunner, type ToolOutcome } from '../tool.js';
import type { ShellWorkerReply, ShellWorkerRequest } from './worker-protocol.js';

interface Slot {
  worker: Worker | null;
  pending: Map<number, (outcome: ToolOutcome) => void>;
}

export interface WorkerShellRunner {
  run: ShellRunner;
  /** Ends the worker threads; calls still running are answered with an error outcome. */
  close(): Promise<void>;
}

export function workerShellRunner(threads: number): WorkerShellRunner {
  const slots: Slot[] = Array.from({ length: Math.max(1, threads) }, () => ({ worker: null, pending: new Map() }));
  let nextId = 1;

  const failAll = (slot: Slot, why: string): void => {
    slot.worker = null;
    const pending = [...slot.pending.values()];
    slot.pending.clear();
    for (const settle of pending) settle(errorOutcome(`run_shell_command failed: the shell worker thread ${why}`, ToolErrorType.unhandled));
  };

  const workerOf = (slot: Slot): Worker => {
    if (slot.worker) return slot.worker;
    const worker = new Worker(new URL('./shell-worker.js', import.meta.url));
    worker.on('message', (reply: ShellWorkerReply) => {
      const settle = slot.pending.get(reply.id);
      slot.pending.delete(reply.id);
      settle?.(reply.outcome);
    });
    worker.on('error', (error) => failAll(slot, `failed: ${error.message}`));
    worker.on('exit', (code) => {
      if (slot.worker === worker) failAll(slot, `exited (${code})`);
    });
    slot.worker = worker;
    return worker;
  };

  const run = (command: ForegroundCommand, signal: AbortSignal): Promise<ToolOutcome> => {
    // The worker with the fewest calls running.
    const slot = slots.reduce((best, s) => (s.pending.size < best.pending.size ? s : best));
    const worker = workerOf(slot);
    const id = nextId++;
    return new Promise<ToolOutcome>((resolve) => {
      const onAbort = (): void => worker.postMessage({ type: 'abort', id } satisfies ShellWorkerRequest);
      slot.pending.set(id, (outcome) => {
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      });
      signal.addEventListener('abort', onAbort, { once: true });
      worker.postMessage({ type: 'run', id, run: command } satisfies ShellWorkerRequest);
      if (signal.aborted) onAbort();
    });
  };

  const close = async (): Promise<void> => {
    const running = slots.flatMap((slot) => {
      const worker = slot.worker;
      if (!worker) return [];
      failAll(slot, 'was stopped');
      return [worker.terminate()];
    });
    await Promise.all(running);
  };

  return { run, close };
}
