/**
 * Every error code mend puts on the wire (result lines, control answers, system
 * errors, refusals in every protocol): the one union. Pure and zod-only, so the
 * SDK may use it. The exit code table maps these in src/cli/exit-codes.ts.
 */
import { z } from 'zod';

export const WIRE_ERROR_CODES = [
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
  'session_lease_lost',
  'store_unavailable',
  'stale_plan',
  'continuation_refused',
  'degraded_history',
  'nothing_to_continue',
  'turn_running',
  'confirmation_required',
  // providers and tools
  'provider_config_missing',
  'provider_error',
  'script_exhausted',
  'invalid_history',
  'tool_error',
  'aborted',
  'max_turns',
  // the input stream and the control protocol
  'malformed_line',
  'line_too_long',
  'invalid_message',
  'missing_type',
  'unknown_type',
  'invalid_control_request',
  'invalid_request',
  'unknown_subtype',
  'unknown_request_id',
  'stdin_error',
  // the daemon's HTTP edge (mend serve)
  'unauthorized',
  'forbidden_host',
  'not_found',
  'unsupported_media_type',
  'payload_too_large',
  'invalid_session_id',
  'invalid_client_id',
  'outside_roots',
  'prompt_queue_full',
  'server_closing',
  'internal',
] as const;

export const WireErrorCodeSchema = z.enum(WIRE_ERROR_CODES);
export type WireErrorCode = z.infer<typeof WireErrorCodeSchema>;

/** The codes a refused continuation or prompt carries, in every protocol. */
export const REFUSAL_CODES = [
  'stale_plan',
  'continuation_refused',
  'degraded_history',
  'session_locked',
  'nothing_to_continue',
  'turn_running',
  /** An auto-continue the policy does not allow: the tail needs a person's (or host's) explicit continue. */
  'confirmation_required',
] as const satisfies readonly WireErrorCode[];
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** The common refusal shape: `{accepted: false, code, message}`. */
export const RefusalSchema = z.object({
  accepted: z.literal(false),
  code: z.enum(REFUSAL_CODES),
  message: z.string(),
});
export type Refusal = z.infer<typeof RefusalSchema>;
