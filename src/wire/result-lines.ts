/**
 * The fields of a `result` line that no turn produced (a refusal, an error before
 * any turn ran, an inspect-only run), and the line itself. Pure, so the SDK may
 * build the same line (a prompt the daemon refused) as the CLI prints.
 */
import type { ResultMessage } from './messages.js';

export type ResultFields = Pick<ResultMessage, 'subtype' | 'is_error' | 'duration_ms' | 'duration_api_ms' | 'num_turns' | 'usage' | 'permission_denials'> & {
  result?: string;
  error?: NonNullable<ResultMessage['error']>;
  stop_reason?: string | null;
  modelUsage?: ResultMessage['modelUsage'];
};

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

/**
 * Every result carries Claude Code's fields too (`stop_reason`, `total_cost_usd`, `modelUsage`),
 * and an error result its message as `errors: [message]`: Claude's SDK calls `errors.map` on
 * every error result and would throw a TypeError, losing mend's message.
 */
export function resultMessage(sessionId: string, newId: () => string, fields: ResultFields): ResultMessage {
  const { stop_reason, modelUsage, ...rest } = fields;
  return {
    type: 'result',
    uuid: newId(),
    session_id: sessionId,
    ...rest,
    stop_reason: stop_reason ?? (fields.is_error ? null : 'end_turn'),
    total_cost_usd: 0,
    modelUsage: modelUsage ?? {},
    ...(fields.is_error ? { errors: [fields.error?.message ?? fields.result ?? 'error'] } : {}),
  };
}

/** Claude's per-model usage entry for a turn's tokens (mend does not know prices, context windows or caches). */
export function modelUsageFor(
  model: string | null | undefined,
  usage: { input_tokens: number; output_tokens: number },
): NonNullable<ResultMessage['modelUsage']> {
  if (!model) return {};
  return {
    [model]: {
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      webSearchRequests: 0,
      costUSD: 0,
      contextWindow: 0,
      maxOutputTokens: 0,
    },
  };
}
