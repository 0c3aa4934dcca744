/**
 * Errors the SDK throws. Self-contained on purpose: the SDK may only depend on
 * src/sdk and src/wire, so it does not reuse the CLI's MendError.
 */

/** Base class: every SDK error carries a stable `code`. */
export class MendSdkError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MendSdkError';
  }
}

/** The CLI process ended on its own with a non-zero exit code, a signal, or could not be started. */
export class MendProcessError extends MendSdkError {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly signal: string | null,
    /** The last bytes the CLI wrote to stderr (bounded). */
    readonly stderrTail: string,
    options?: { cause?: unknown },
    code = 'process_exited',
  ) {
    super(code, message, options);
    this.name = 'MendProcessError';
  }
}

/** A control request was answered with an error, could not be sent, or got an answer of the wrong shape. */
export class MendControlError extends MendSdkError {
  constructor(
    code: string,
    message: string,
    readonly subtype: string,
    readonly requestId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.name = 'MendControlError';
  }
}

/** The query was aborted through `options.abortSignal`. */
export class MendAbortError extends MendSdkError {
  constructor(message = 'the mend query was aborted', options?: { cause?: unknown }) {
    super('aborted', message, options);
    this.name = 'AbortError';
  }
}

export function isMendProcessError(value: unknown): value is MendProcessError {
  return value instanceof MendProcessError;
}

/**
 * The CLI ended the run with an error result and then exited non-zero: the result's
 * stable code (`session_locked`, `usage`, `provider_error`…) and, for a locked
 * session, who holds it. Thrown instead of a bare "exited with code N".
 */
export class MendCliError extends MendProcessError {
  constructor(
    code: string,
    message: string,
    process: MendProcessError,
    readonly holder: { host?: string; pid?: number | null; since?: string } | undefined,
  ) {
    // Still a MendProcessError (the process did exit non-zero), now with the CLI's own code and words.
    super(message, process.exitCode, process.signal, process.stderrTail, { cause: process }, code);
    this.name = 'MendCliError';
  }
}
