/**
 * How `mend serve` keeps its one event loop free for many sessions, from the
 * environment (read only here, in the composition root). Each is an optimisation with
 * the simple path as its oracle and off switch; every other command serves one session
 * and keeps the simple paths whatever the variables say.
 *
 * - MEND_APPEND_MODE=queued (default) | sync: durable appends on libuv's thread pool
 *   with one fsync per batch (src/session/queued-append), or a write + fsync on the
 *   event loop as before.
 * - MEND_SHELL_WORKERS=N (default 2) | 0: foreground shell commands start in N small
 *   helper processes (src/tools/shell-run), or inline as before.
 * - MEND_ACCEPT_COPIES=N (default 8) | 0: copies of the listening socket polled beside it,
 *   so a busy loop accepts up to N + 1 connections an iteration instead of one
 *   (src/frontends/daemon/accept-copies), or node's one descriptor as before.
 * - MEND_SSE_DIRECT=1 (default) | 0: event streams written to node's response directly
 *   (src/frontends/daemon/sse-sink.ts), or through hono's streamSSE as before.
 *
 * libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says otherwise) is started by
 * node's module loader before this code runs, so its size is the environment's to set.
 */
import { APPEND_MODES, type AppendMode } from '../session/queued-append/log-appender.js';

export const DEFAULT_SHELL_WORKERS = 2;
const MAX_SHELL_WORKERS = 16;
export const DEFAULT_ACCEPT_COPIES = 8;
const MAX_ACCEPT_COPIES = 64;

type Env = Readonly<Record<string, string | undefined>>;

export function daemonAppendMode(env: Env, note: (message: string) => void): AppendMode {
  const value = env['MEND_APPEND_MODE'];
  if (value === undefined || value === '') return 'queued';
  if ((APPEND_MODES as readonly string[]).includes(value)) return value as AppendMode;
  note(`ignoring MEND_APPEND_MODE=${value}: use ${APPEND_MODES.join(' or ')}`);
  return 'queued';
}

/** Helper processes for shell commands; 0: inline. */
export function daemonShellWorkers(env: Env, note: (message: string) => void): number {
  return wholeNumber(env, 'MEND_SHELL_WORKERS', DEFAULT_SHELL_WORKERS, MAX_SHELL_WORKERS, note);
}

/** Copies of the daemon's listening socket; 0: none. */
export function daemonAcceptCopies(env: Env, note: (message: string) => void): number {
  return wholeNumber(env, 'MEND_ACCEPT_COPIES', DEFAULT_ACCEPT_COPIES, MAX_ACCEPT_COPIES, note);
}

/** Event streams written to node's response directly; MEND_SSE_DIRECT=0: through hono's streamSSE. */
export function daemonSseDirect(env: Env, note: (message: string) => void): boolean {
  return wholeNumber(env, 'MEND_SSE_DIRECT', 1, 1, note) === 1;
}

/** A whole number from 0 to `max` in `name`; the default when unset, empty or anything else (told). */
function wholeNumber(env: Env, name: string, fallback: number, max: number, note: (message: string) => void): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (Number.isInteger(n) && n >= 0 && n <= max) return n;
  note(`ignoring ${name}=${value}: use a whole number from 0 to ${max}`);
  return fallback;
}
