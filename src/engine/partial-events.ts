/**
 * Maps provider events to Claude-style `stream_event` payloads for
 * --include-partial-messages (message_start, content_block_*, message_stop).
 */
import type { ProviderEvent } from '../providers/provider.js';

export class PartialEventMapper {
  private started = false;
  private index = -1;
  private open: 'text' | 'thinking' | 'tool_use' | null = null;

  constructor(
    private readonly messageId: string,
    private readonly model: string,
  ) {}

  map(event: ProviderEvent): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'message_start', message: { id: this.messageId, type: 'message', role: 'assistant', model: this.model, content: [] } });
    }
    switch (event.type) {
      case 'text_delta':
      case 'thought_delta': {
        const kind = event.type === 'text_delta' ? 'text' : 'thinking';
        if (this.open !== kind) {
          this.close(out);
          this.index += 1;
          this.open = kind;
          out.push({ type: 'content_block_start', index: this.index, content_block: kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' } });
        }
        out.push({
          type: 'content_block_delta',
          index: this.index,
          delta: kind === 'text' ? { type: 'text_delta', text: event.text } : { type: 'thinking_delta', thinking: event.text },
        });
        break;
      }
      case 'tool_call_start':
        this.close(out);
        this.index += 1;
        this.open = 'tool_use';
        out.push({ type: 'content_block_start', index: this.index, content_block: { type: 'tool_use', id: event.id, name: event.name, input: {} } });
        break;
      case 'tool_call_delta':
        out.push({ type: 'content_block_delta', index: this.index, delta: { type: 'input_json_delta', partial_json: event.argsDelta } });
        break;
      case 'finish':
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
