/**
 * OpenAI Responses API streaming replies (POST /v1/responses), the events Codex reads:
 * response.created, response.output_item.done for each output item, response.completed
 * with the usage.
 */
import type { MockReply, SseFrame } from './model-mock.js';

function response(id: string, items: Array<Record<string, unknown>>): MockReply {
  const frames: SseFrame[] = [{ event: 'response.created', data: { type: 'response.created', response: { id } } }];
  items.forEach((item, output_index) => {
    frames.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index, item } });
  });
  frames.push({
    event: 'response.completed',
    data: {
      type: 'response.completed',
      response: {
        id,
        usage: {
          input_tokens: 12,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 8,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 20,
        },
      },
    },
  });
  return { kind: 'sse', frames };
}

export function responsesFunctionCall(opts: { responseId: string; callId: string; name: string; args: Record<string, unknown> }): MockReply {
  return response(opts.responseId, [
    { type: 'function_call', id: `fc_${opts.callId}`, call_id: opts.callId, name: opts.name, arguments: JSON.stringify(opts.args) },
  ]);
}

export function responsesText(opts: { responseId: string; text: string }): MockReply {
  return response(opts.responseId, [
    { type: 'message', id: `msg_${opts.responseId}`, role: 'assistant', content: [{ type: 'output_text', text: opts.text, annotations: [] }] },
  ]);
}
