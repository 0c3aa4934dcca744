/**
 * A resumed session's history as UI items: the API history as written (before
 * any repair, so a call the crash left without a result shows as "outcome
 * unknown" rather than as the synthetic failure the repair adds).
 */
import type { Content } from '../../session/records.js';
import type { ToolStatus, UiItem } from './ui-items.js';

export function historyItems(history: readonly Content[], newId: () => string): UiItem[] {
  const items: UiItem[] = [];
  const tools = new Map<string, Extract<UiItem, { type: 'tool' }>>();
  let lastTextEntry: Content | null = null;
  for (const entry of history) {
    for (const part of entry.parts) {
      if (part.functionCall) {
        const call = part.functionCall;
        const item: Extract<UiItem, { type: 'tool' }> = {
          id: newId(),
          type: 'tool',
          callId: call.id ?? '',
          name: call.name,
          args: call.args ?? {},
          status: 'unknown',
          output: '',
        };
        items.push(item);
        if (call.id) tools.set(call.id, item);
      } else if (part.functionResponse) {
        const response = part.functionResponse.response;
        const item = part.functionResponse.id ? tools.get(part.functionResponse.id) : undefined;
        const failed = 'error' in response;
        const output = textOf(failed ? response['error'] : response['output']);
        // Results are shown on their call; a result with no call of its own is listed as it was recorded.
        if (item) {
          item.status = failed ? 'failed' : 'done';
          item.output = output;
        } else {
          items.push({
            id: newId(),
            type: 'tool',
            callId: part.functionResponse.id ?? '',
            name: part.functionResponse.name,
            args: {},
            status: statusOf(failed),
            output,
          });
        }
      } else if (typeof part.text === 'string' && part.text !== '') {
        const type = entry.role === 'user' ? 'user' : part.thought ? 'thought' : 'assistant';
        const last = items.at(-1);
        // Consecutive text parts of one entry read as one block.
        if (last && lastTextEntry === entry && (last.type === 'user' || last.type === 'assistant' || last.type === 'thought') && last.type === type) {
          last.text += part.text;
          continue;
        }
        items.push({ id: newId(), type, text: part.text });
        lastTextEntry = entry;
      }
    }
  }
  return items;
}

function statusOf(failed: boolean): ToolStatus {
  return failed ? 'failed' : 'done';
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}
