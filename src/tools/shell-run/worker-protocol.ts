/** The messages between worker-shell-runner.ts and its helper process (shell-worker.ts), over IPC (JSON). */
import type { ForegroundCommand, ToolOutcome } from '../tool.js';

export type ShellWorkerRequest = { type: 'run'; id: number; run: ForegroundCommand } | { type: 'abort'; id: number };

export type ShellWorkerReply = { type: 'done'; id: number; outcome: ToolOutcome };
