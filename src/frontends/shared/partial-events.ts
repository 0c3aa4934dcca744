/**
 * Engine stream events -> Claude-style `stream_event` payloads for
 * --include-partial-messages (message_start, content_block_*, message_stop).
 * One mapper per model message.
 */
import type { EngineEvent } from '../../engine/engine-events.js';
import type { RuntimeEvent } from '../../runtime/session-runtime.js';

type StreamPart = Extract<EngineEvent, { type: 'message_start' | 'text_delta' | 'thought_delta' | 'tool_input_start' | 'tool_input_delta' | 'message_end' }>;

export function isStreamPart(event: RuntimeEvent): event is StreamPart {
  return (
    event.type === 'message_start' ||
    event.type === 'text_delta' ||
    event.type === 'thought_delta' ||
    event.type === 'tool_input_start' ||
    event.type === 'tool_input_delta' ||
    event.type === 'message_end'
  );
}

export class PartialEventMapper {
  private index = -1;
  private open: 'text' | 'thinking' | 'tool_use' | null = null;

  map(event: StreamPart): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    switch (event.type) {
      case 'message_start':
        this.index = -1;
        this.open = null;
        out.push({ type: 'message_start', message: { id: event.messageId, type: 'message', role: 'assistant', model: event.model, content: [] } });
        break;
      case 'text_delta':
      case 'thought_delta': {
        const kind = event.type === 'text_delta' ? 'text' : 'thinking';
        if (this.open !== kind) {
          this.close(out);
          this.index += 1;
          this.open = kind;
          out.push({
            type: 'content_block_start',
            index: this.index,
            content_block: kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' },
          });
        }
        out.push({
          type: 'content_block_delta',
          index: this.index,
          delta: kind === 'text' ? { type: 'text_delta', text: event.text } : { type: 'thinking_delta', thinking: event.text },
        });
        break;
      }
      case 'tool_input_start':
        this.close(out);
        this.index += 1;
        this.open = 'tool_use';
        out.push({ type: 'content_block_start', index: this.index, content_block: { type: 'tool_use', id: event.callId, name: event.name, input: {} } });
        break;
      case 'tool_input_delta':
        out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'input_json_delta', partial_json: event.delta } });
        break;
      case 'message_end':
        this.close(out);
        out.push({ type: 'message_stop' });
        break;
    }
    return out;
  }

  private close(out: Array<Record<string, unknown>>): void {
    if (this.open === null) return;
    out.push({ type: 'content_block_stop', index: this.index });
    this.open = null;
  }
}
