/**
 * Foreground shell commands in small helper processes, for a process that serves many
 * sessions (the daemon). Starting a process blocks the thread that starts it until the
 * child has exec'd, and the fork costs in proportion to the parent's memory: 16 ms from
 * a 250 MB daemon against 6.5 ms from a 50 MB process on this machine, and 200 commands
 * started at once held a daemon's loop for 3.4 s. Worker threads freed the loop but
 * forked the same large process; a helper is small and runs on another core. The
 * commands run exactly as inline (runForegroundCommand, the oracle:
 * `MEND_SHELL_WORKERS=0` keeps them inline); only the process that starts them differs.
 * An abort is passed on to the helper, which kills the command's process group as the
 * inline path does. A helper that loses its parent exits; commands it started live on
 * in their own process groups, as inline ones do when the daemon dies.
 *
 * Helpers start on first use; `close` ends them (the host calls it once its sessions are
 * closed). A helper that fails answers its running calls with an error outcome and is
 * replaced.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { errorOutcome, ToolErrorType, type ForegroundCommand, type ShellRunner, type ToolOutcome } from '../tool.js';
import type { ShellWorkerReply, ShellWorkerRequest } from './worker-protocol.js';

interface Slot {
  worker: ChildProcess | null;
  pending: Map<number, (outcome: ToolOutcome) => void>;
}

export interface WorkerShellRunner {
  run: ShellRunner;
  /** Ends the helpers; calls still running are answered with an error outcome. */
  close(): Promise<void>;
}

export function workerShellRunner(helpers: number): WorkerShellRunner {
  const slots: Slot[] = Array.from({ length: Math.max(1, helpers) }, () => ({ worker: null, pending: new Map() }));
  let nextId = 1;

  const failAll = (slot: Slot, why: string): void => {
    slot.worker = null;
    const pending = [...slot.pending.values()];
    slot.pending.clear();
    for (const settle of pending) settle(errorOutcome(`run_shell_command failed: the shell helper process ${why}`, ToolErrorType.unhandled));
  };

  const workerOf = (slot: Slot): ChildProcess => {
    if (slot.worker) return slot.worker;
    // No flags of the parent's (a profiler, a heap size): the helper is a plain small node.
    const worker = fork(new URL('./shell-worker.js', import.meta.url), [], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
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
      const onAbort = (): void => send(worker, { type: 'abort', id });
      slot.pending.set(id, (outcome) => {
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      });
      signal.addEventListener('abort', onAbort, { once: true });
      send(worker, { type: 'run', id, run: command });
      if (signal.aborted) onAbort();
    });
  };

  const close = async (): Promise<void> => {
    const running = slots.flatMap((slot) => {
      const worker = slot.worker;
      if (!worker) return [];
      failAll(slot, 'was stopped');
      return [
        new Promise<void>((resolve) => (worker.exitCode !== null || worker.signalCode !== null ? resolve() : worker.once('exit', () => resolve()).kill())),
      ];
    });
    await Promise.all(running);
  };

  return { run, close };
}

/** A message to a helper; one that exited meanwhile is answered by its 'exit' handler. */
function send(worker: ChildProcess, message: ShellWorkerRequest): void {
  if (worker.connected) worker.send(message, (error) => void error);
}
