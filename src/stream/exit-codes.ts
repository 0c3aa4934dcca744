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
  sigint: 130,
  sigterm: 143,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODE_TABLE: ReadonlyArray<[number, string]> = [
  [ExitCode.success, 'success (also: inspected a session, nothing to continue)'],
  [ExitCode.serverShutdown, "mend serve: the server's graceful shutdown on SIGTERM or SIGINT (running turns recorded as aborted)"],
  [ExitCode.runFailed, 'the run failed (provider error, max turns, tool loop error)'],
  [ExitCode.usage, 'usage or configuration error (bad flags, bad --resume value, no model settings, malformed scripted responses)'],
  [ExitCode.session, 'session error: not found, exists, locked, stale plan, continuation refused'],
  [ExitCode.storage, 'the session log could not be written (disk full, I/O error)'],
  [ExitCode.sigint, 'interrupted by SIGINT (turn recorded as aborted)'],
  [ExitCode.sigterm, 'terminated by SIGTERM (turn recorded as aborted)'],
];

const SESSION_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'session_not_found',
  'session_exists',
  'session_locked',
  'no_session_to_continue',
  'session_read_failed',
  'stale_plan',
  'continuation_refused',
  'degraded_history',
  'turn_running',
  'confirmation_required',
]);

export function exitCodeFor(code: ErrorCode | string): number {
  if (code === 'usage' || code === 'invalid_resume_target' || code === 'provider_config_missing') return ExitCode.usage;
  if (SESSION_CODES.has(code as ErrorCode)) return ExitCode.session;
  if (code === 'session_write_failed') return ExitCode.storage;
  return ExitCode.runFailed;
}

export function exitCodeTableText(): string {
  return ['Exit codes:', ...EXIT_CODE_TABLE.map(([code, meaning]) => `  ${String(code).padEnd(4)} ${meaning}`)].join('\n');
}
