/**
 * mend's process-backed SDK: `query()` runs the mend CLI in stream-json mode and
 * exposes its messages and control protocol, including session recovery.
 */
import { ProcessTransport } from './process-transport.js';
import { Query } from './query.js';
import type { QueryParams } from './types.js';

export function query({ prompt, options = {} }: QueryParams = {}): Query {
  return new Query(new ProcessTransport(options), { prompt, canUseTool: options.canUseTool, abortSignal: options.abortSignal, startupTimeoutMs: options.startupTimeoutMs });
}

export { Query, type QueryConfig } from './query.js';
export { ProcessTransport, STDERR_TAIL_BYTES, type ExitInfo, type Transport } from './process-transport.js';
export { MendAbortError, MendCliError, MendControlError, MendProcessError, MendSdkError, isMendProcessError } from './errors.js';
export { optionsToArgs, defaultExecutable } from './options-to-args.js';
export { validationIssues, type InboundMessage } from './validate-message.js';
export type * from './types.js';
