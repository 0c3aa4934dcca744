/**
 * The fields of a `result` line that no turn produced (a refusal, an error before
 * any turn ran, an inspect-only run), and the line itself. Pure, so the SDK may
 * build the same line (a prompt the daemon refused) as the CLI prints.
 */
import type { ResultMessage } from './messages.js';

export type ResultFields = Pick<
  ResultMessage,
  'subtype' | 'is_error' | 'duration_ms' | 'duration_api_ms' | 'num_turns' | 'usage' | 'permission_denials'
> & { result?: string; error?: NonNullable<ResultMessage['error']> };

/** What an error result says beyond code and message (a locked session: its holder and id). */
export type ErrorExtras = Omit<NonNullable<ResultMessage['error']>, 'code' | 'message'>;

export function errorFields(code: string, message: string, durationMs = 0, extras: ErrorExtras = {}): ResultFields {
  return {
    subtype: 'error_during_execution',
    is_error: true,
    duration_ms: Math.round(durationMs),
    duration_api_ms: 0,
    num_turns: 0,
    usage: { input_tokens: 0, output_tokens: 0 },
    permission_denials: [],
    error: { code, message, ...extras },
  };
}

export function successFields(result: string, durationMs = 0): ResultFields {
  return {
    subtype: 'success',
    is_error: false,
    duration_ms: Math.round(durationMs),
    duration_api_ms: 0,
    num_turns: 0,
    result,
    usage: { input_tokens: 0, output_tokens: 0 },
    permission_denials: [],
  };
}

export function resultMessage(sessionId: string, newId: () => string, fields: ResultFields): ResultMessage {
  return { type: 'result', uuid: newId(), session_id: sessionId, ...fields };
}

