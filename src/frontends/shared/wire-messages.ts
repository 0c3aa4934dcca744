/**
 * Domain -> stream-json wire messages: recorded parts to content blocks, engine
 * events to output lines, turn outcomes to `result` fields. The edge where the
 * engine's vocabulary becomes the protocol's.
 */
import type { TurnOutcome } from '../../engine/engine-events.js';
import type { RuntimeEvent } from '../../runtime/session-runtime.js';
import type { Part } from '../../session/records.js';
import type { AssistantMessage, ContentBlock, OutputMessage, UserMessage } from '../../wire/messages.js';
import type { ResultFields } from '../../wire/result-lines.js';
import { PartialEventMapper, isStreamPart } from './partial-events.js';

export { errorFields, modelUsageFor, resultMessage, successFields, type ResultFields, type ErrorExtras } from '../../wire/result-lines.js';
import { modelUsageFor } from '../../wire/result-lines.js';

/**
 * A tool call's input on the wire is cut past this many bytes (with a marker), like tool
 * output is: 128 calls (the per-response cap) of this size still fit one protocol line
 * (10 MiB), so no line is ever over the cap a host reads.
 */
export const MAX_WIRE_INPUT_BYTES = 64 * 1024;

function wireInput(args: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(args);
  if (json.length <= MAX_WIRE_INPUT_BYTES / 3 || Buffer.byteLength(json) <= MAX_WIRE_INPUT_BYTES) return args;
  return { mend_truncated: true, bytes: Buffer.byteLength(json), preview: json.slice(0, 4096) };
}

export function partsToBlocks(parts: readonly Part[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const part of parts) {
    if (part.functionCall) {
      const call = part.functionCall as typeof part.functionCall & { argsError?: unknown; rawArgs?: unknown };
      // Arguments that were not JSON (or over the cap) were never run: the host sees why, and a preview.
      const input =
        typeof call.argsError === 'string'
          ? { mend_invalid_arguments: call.argsError, preview: typeof call.rawArgs === 'string' ? call.rawArgs.slice(0, 4096) : '' }
          : wireInput(call.args ?? {});
      blocks.push({ type: 'tool_use', id: call.id ?? '', name: call.name, input });
    } else if (part.thought === true && typeof part.text === 'string') {
      blocks.push({ type: 'thinking', thinking: part.text });
    } else if (typeof part.text === 'string') {
      blocks.push({ type: 'text', text: part.text });
    }
  }
  return blocks;
}

export function assistantMessage(input: {
  uuid: string;
  sessionId: string;
  messageId: string;
  model: string;
  parts: readonly Part[];
  stopReason: string | null;
  usage: { inputTokens: number; outputTokens: number };
}): AssistantMessage {
  return {
    type: 'assistant',
    uuid: input.uuid,
    session_id: input.sessionId,
    parent_tool_use_id: null,
    message: {
      id: input.messageId,
      type: 'message',
      role: 'assistant',
      model: input.model,
      content: partsToBlocks(input.parts),
      stop_reason: input.stopReason,
      usage: { input_tokens: input.usage.inputTokens, output_tokens: input.usage.outputTokens },
    },
  };
}

export function responseText(response: Record<string, unknown>): { text: string; isError: boolean } {
  const isError = response['error'] !== undefined;
  const value = isError ? response['error'] : response['output'];
  return { text: typeof value === 'string' ? value : JSON.stringify(value ?? response), isError };
}

export function toolResultMessage(uuid: string, sessionId: string, results: readonly Part[]): UserMessage {
  return {
    type: 'user',
    uuid,
    session_id: sessionId,
    parent_tool_use_id: null,
    message: {
      role: 'user',
      content: results
        .filter((p) => p.functionResponse)
        .map((p) => {
          const { text, isError } = responseText(p.functionResponse!.response);
          return { type: 'tool_result' as const, tool_use_id: p.functionResponse!.id ?? '', is_error: isError, content: text };
        }),
    },
  };
}

/** `model`: the model the turn used, for Claude's `modelUsage` (absent: an empty map). */
export function outcomeFields(outcome: TurnOutcome, model?: string | null): ResultFields {
  const fields: ResultFields = {
    subtype: outcome.status === 'success' ? 'success' : outcome.status === 'max_turns' ? 'error_max_turns' : 'error_during_execution',
    is_error: outcome.status !== 'success',
    duration_ms: outcome.durationMs,
    duration_api_ms: outcome.apiDurationMs,
    num_turns: outcome.numTurns,
    usage: { input_tokens: outcome.usage.inputTokens, output_tokens: outcome.usage.outputTokens },
    permission_denials: outcome.permissionDenials.map((d) => ({ tool_name: d.toolName, tool_use_id: d.toolUseId, tool_input: d.toolInput })),
  };
  fields.modelUsage = modelUsageFor(model, fields.usage);
  if (outcome.status === 'success') fields.result = outcome.text ?? '';
  if (outcome.error && outcome.status !== 'success') fields.error = { ...outcome.error };
  return fields;
}

/**
 * Maps the engine events of one session to the stream-json lines a host sees.
 * Terminal turn events are not mapped here: the front end writes the `result`.
 */
export class WireEventMapper {
  private readonly partial = new PartialEventMapper();

  constructor(
    private readonly sessionId: string,
    private readonly newId: () => string,
    private readonly includePartialMessages: boolean,
  ) {}

  map(event: RuntimeEvent): OutputMessage[] {
    if (isStreamPart(event)) {
      if (!this.includePartialMessages) return [];
      return this.partial.map(event).map((e) => ({
        type: 'stream_event',
        uuid: this.newId(),
        session_id: this.sessionId,
        parent_tool_use_id: null,
        event: e as { type: string },
      }));
    }
    switch (event.type) {
      case 'assistant_message':
        return [assistantMessage({ ...event, sessionId: this.sessionId })];
      case 'tool_call_finished':
        return [toolResultMessage(event.uuid, this.sessionId, [event.result])];
      // The synthetic results a continuation writes are tool results like any other: the host sees them.
      case 'recovery_results':
        return event.parts.map((part, i) => toolResultMessage(event.uuids[i] ?? this.newId(), this.sessionId, [part]));
      case 'warning':
        return [{ type: 'system', subtype: 'warning', uuid: this.newId(), session_id: this.sessionId, warning: { code: event.code, message: event.message } }];
      // No message of their own on this wire: the host sent the prompt, whoever answers approvals is
      // asked directly, a turn's end is the result message each front end writes from its outcome, and
      // the plan is asked for (get_recovery_plan) rather than pushed.
      case 'turn_started':
      case 'user_prompt':
      case 'tool_approval_requested':
      case 'tool_call_started':
      case 'turn_finished':
      case 'turn_failed':
      case 'turn_aborted':
      case 'recovery_plan':
        return [];
    }
  }
}
