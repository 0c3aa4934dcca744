/**
 * The one table of exit codes. README and --help print it from here; the SDK reads
 * it too (a child's exit code means the same thing everywhere).
 */
import type { WireErrorCode as ErrorCode } from './error-codes.js';

export const ExitCode = {
  success: 0,
  /** `mend serve` stopped by SIGTERM or SIGINT: it shut down gracefully. */
  serverShutdown: 0,
  runFailed: 1,
  usage: 2,
  session: 3,
  storage: 4,
  /** The terminal went away (SIGHUP): the turn is recorded as aborted (128 + 1). */
  sighup: 129,
  sigint: 130,
  /** Whoever read stdout went away (EPIPE): as a process killed by SIGPIPE would (128 + 13). */
  stdoutClosed: 141,
  sigterm: 143,
} as const;

/** The exit code of a run stopped for this abort reason. */
export function exitCodeForAbort(reason: unknown): number {
  switch (reason) {
    case 'sigterm':
      return ExitCode.sigterm;
    case 'sighup':
      return ExitCode.sighup;
    case 'stdout_closed':
      return ExitCode.stdoutClosed;
    default:
      return ExitCode.sigint;
  }
}
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODE_TABLE: ReadonlyArray<[number, string]> = [
  [ExitCode.success, 'success (also: inspected a session, nothing to continue)'],
  [ExitCode.serverShutdown, "mend serve: the server's graceful shutdown on SIGTERM or SIGINT (running turns recorded as aborted)"],
  [ExitCode.runFailed, 'the run failed (provider error, max turns, tool loop error)'],
  [ExitCode.usage, 'usage or configuration error (bad flags, bad --resume value, no model settings, malformed scripted responses)'],
  [ExitCode.session, 'session error: not found, exists, locked, in no known format, stale plan, continuation refused'],
  [ExitCode.storage, 'the session store could not be read or written (disk full, I/O error, database unreachable)'],
  [ExitCode.sighup, 'the terminal closed (SIGHUP; turn recorded as aborted, tool processes killed)'],
  [ExitCode.sigint, 'interrupted by SIGINT (turn recorded as aborted)'],
  [ExitCode.stdoutClosed, 'stdout was closed by its reader (EPIPE; turn recorded as aborted, as SIGPIPE would)'],
  [ExitCode.sigterm, 'terminated by SIGTERM (turn recorded as aborted)'],
];

const SESSION_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'session_not_found',
  'session_exists',
  'session_locked',
  'no_session_to_continue',
  'session_read_failed',
  'unknown_session_format',
  'foreign_session_read_only',
  'stale_plan',
  'continuation_refused',
  'degraded_history',
  'turn_running',
  'confirmation_required',
  'session_lease_lost',
]);

export function exitCodeFor(code: ErrorCode | string): number {
  if (code === 'usage' || code === 'invalid_resume_target' || code === 'provider_config_missing') return ExitCode.usage;
  if (SESSION_CODES.has(code as ErrorCode)) return ExitCode.session;
  if (code === 'session_write_failed' || code === 'store_unavailable') return ExitCode.storage;
  return ExitCode.runFailed;
}

export function exitCodeTableText(): string {
  return ['Exit codes:', ...EXIT_CODE_TABLE.map(([code, meaning]) => `  ${String(code).padEnd(4)} ${meaning}`)].join('\n');
}
