/**
 * The worker thread of worker-shell-runner.ts: runs foreground commands exactly as the
 * inline path does (runForegroundCommand), so that starting a process (fork, then
 * waiting for the child's exec: 10-30 ms each on a busy machine) blocks this thread's
 * loop instead of the daemon's. Messages: `run` and `abort` in, `done` out.
 */
import { parentPort } from 'node:worker_threads';
import { errorOutcome, ToolErrorType } from '../tool.js';
import { runForegroundCommand } from './foreground-command.js';
import type { ShellWorkerReply, ShellWorkerRequest } from './worker-protocol.js';

const running = new Map<number, AbortController>();
const port = parentPort!;

port.on('message', (message: ShellWorkerRequest) => {
  if (message.type === 'abort') {
    running.get(message.id)?.abort();
    return;
  }
  const controller = new AbortController();
  running.set(message.id, controller);
  void runForegroundCommand(message.run, controller.signal)
    .catch((error: unknown) => errorOutcome(`run_shell_command failed: ${error instanceof Error ? error.message : String(error)}`, ToolErrorType.unhandled))
    .then((outcome) => {
      running.delete(message.id);
      port.postMessage({ type: 'done', id: message.id, outcome } satisfies ShellWorkerReply);
    });
});
