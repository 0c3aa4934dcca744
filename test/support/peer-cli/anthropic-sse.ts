/**
 * Anthropic Messages streaming replies (POST /v1/messages with `stream: true`), as the
 * real API frames them: message_start, one content block (start, delta, stop),
 * message_delta with the stop reason, message_stop.
 */
import type { MockReply, SseFrame } from './model-mock.js';

const USAGE = { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

function message(id: string, model: string, block: Record<string, unknown>, delta: Record<string, unknown>, stopReason: string): MockReply {
  const frames: SseFrame[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: USAGE },
      },
    },
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: block } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta } },
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 8 } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
  return { kind: 'sse', frames };
}

export function anthropicToolUse(opts: { messageId: string; model: string; toolUseId: string; name: string; input: Record<string, unknown> }): MockReply {
  return message(
    opts.messageId,
    opts.model,
    { type: 'tool_use', id: opts.toolUseId, name: opts.name, input: {} },
    { type: 'input_json_delta', partial_json: JSON.stringify(opts.input) },
    'tool_use',
  );
}

export function anthropicText(opts: { messageId: string; model: string; text: string }): MockReply {
  return message(opts.messageId, opts.model, { type: 'text', text: '' }, { type: 'text_delta', text: opts.text }, 'end_turn');
}
