/**
 * The list of every error code mend puts on the wire (error-codes.ts makes the union and
 * its schema of it). A file of its own, without zod, so that what needs only the list
 * (src/errors.ts, and through it the outline pass's worker thread) does not load zod.
 */
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
  /** A file in no session format mend knows (neither mend's nor another agent's it reads). */
  'unknown_session_format',
  /** Another agent's session file: read in place, never written (continue it in mend: it is copied first). */
  'foreign_session_read_only',
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
  /** An `mcpServers` entry a daemon request carried makes no sense (no command, a bad URL, an unknown type, a bad name). */
  'invalid_mcp_config',
  'prompt_queue_full',
  'server_closing',
  'internal',
] as const;
