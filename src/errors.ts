/**
 * Every error mend raises on purpose carries a stable code. Callers switch on the
 * code, never on the message. The exit code table lives in src/cli/exit-codes.ts.
 */
export const ErrorCodes = [
  // usage
  'usage',
  'invalid_resume_target',
  // sessions
  'session_not_found',
  'session_exists',
  'session_locked',
  'no_session_to_continue',
  'session_read_failed',
  'session_write_failed',
  'stale_plan',
  'continuation_refused',
  'degraded_history',
  // providers and tools
  'provider_config_missing',
  'provider_error',
  'script_exhausted',
  'invalid_history',
  'tool_error',
  'aborted',
  'max_turns',
  'internal',
] as const;

export type ErrorCode = (typeof ErrorCodes)[number];

export class MendError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MendError';
    this.code = code;
    this.details = details;
  }
}

export function isMendError(value: unknown, code?: ErrorCode): value is MendError {
  return value instanceof MendError && (code === undefined || value.code === code);
}
