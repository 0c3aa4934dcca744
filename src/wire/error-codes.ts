/**
 * Every error code mend puts on the wire (result lines, control answers, system
 * errors, refusals in every protocol): the one union. Pure and zod-only, so the
 * SDK may use it. The exit code table maps these in exit-codes.ts.
 */
import { z } from 'zod';
import { WIRE_ERROR_CODES } from './wire-error-code-list.js';

export { WIRE_ERROR_CODES };

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

/**
 * The code of a refused continuation: a refusal code, or the code of an error met while
 * deciding (an unreadable log keeps `session_read_failed`, never a made-up refusal).
 */
export const ContinueRefusalCodeSchema = WireErrorCodeSchema;

/** The common refusal shape: `{accepted: false, code, message}`. */
export const RefusalSchema = z.object({
  accepted: z.literal(false),
  code: ContinueRefusalCodeSchema,
  message: z.string(),
});
export type Refusal = z.infer<typeof RefusalSchema>;
