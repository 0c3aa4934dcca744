/**
 * Every error mend raises on purpose carries a stable code from the one union
 * (src/wire/error-codes.ts). Callers switch on the code, never on the message.
 * The exit code table lives in src/wire/exit-codes.ts.
 */
import type { WireErrorCode } from './wire/error-codes.js';
import { WIRE_ERROR_CODES } from './wire/wire-error-code-list.js';

export const ErrorCodes = WIRE_ERROR_CODES;
export type ErrorCode = WireErrorCode;

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

/** The stable code of anything thrown: a MendError's own, else `internal`. */
export function errorCodeOf(error: unknown): ErrorCode {
  return isMendError(error) ? error.code : 'internal';
}

export function errorMessageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
