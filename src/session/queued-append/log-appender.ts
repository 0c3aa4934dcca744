/**
 * How a store appends to a session log: `sync` (SessionWriter: write + fsync on the
 * calling thread, what the CLI and every one-session front end use, and the oracle)
 * or `queued` (QueuedLogWriter: the same rules with the I/O on libuv's thread pool and
 * one fsync per batch, for a process that serves many sessions at once). Either way a
 * durable append's promise resolves only after its fsync.
 */
import { SessionWriter, type AppendOptions, type WriteFaultHook } from '../log-writer.js';
import type { ChatRecord } from '../records.js';
import { QueuedLogWriter } from './queued-log-writer.js';

export type AppendMode = 'sync' | 'queued';

export const APPEND_MODES: readonly AppendMode[] = ['sync', 'queued'];

export interface LogAppender {
  readonly path: string;
  append(record: ChatRecord, options: AppendOptions): Promise<void>;
  /** Waits for what is queued, then closes the log. */
  close(): Promise<void>;
}

/** SessionWriter as a LogAppender: the line is written (and synced) before append returns its promise. */
class SyncAppender implements LogAppender {
  constructor(private readonly writer: SessionWriter) {}

  get path(): string {
    return this.writer.path;
  }

  async append(record: ChatRecord, options: AppendOptions): Promise<void> {
    this.writer.append(record, options);
  }

  async close(): Promise<void> {
    this.writer.close();
  }
}

export function openLogAppender(path: string, options: { create: boolean; mode: AppendMode; faultHook?: WriteFaultHook | undefined }): LogAppender {
  const open = { create: options.create, ...(options.faultHook ? { faultHook: options.faultHook } : {}) };
  return options.mode === 'queued' ? QueuedLogWriter.open(path, open) : new SyncAppender(SessionWriter.open(path, open));
}
