/**
 * The helper process of worker-shell-runner.ts: runs foreground commands exactly as the
 * inline path does (runForegroundCommand), so that starting a process (a fork of this
 * small process, then waiting for the child's exec) happens here instead of on the
 * daemon's loop. Messages over IPC: `run` and `abort` in, `done` out. Exits when its
 * parent is gone.
 */
import { errorOutcome, ToolErrorType } from '../tool.js';
import { runForegroundCommand } from './foreground-command.js';
import type { ShellWorkerReply, ShellWorkerRequest } from './worker-protocol.js';

const running = new Map<number, AbortController>();

process.on('disconnect', () => process.exit(0));
process.on('message', (message: ShellWorkerRequest) => {
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
      if (process.connected) process.send!({ type: 'done', id: message.id, outcome } satisfies ShellWorkerReply);
    });
});
