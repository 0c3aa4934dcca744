/**
 * Runtime events -> UI items, as a pure reducer. Streaming text, thoughts and
 * running tools are "live" (redrawn as they grow); once a message or a tool
 * call has ended its item moves to "done" and is never drawn again (Ink's
 * static region), which keeps long outputs from flickering.
 */
import type { ToolCallStatus } from '../../engine/engine-events.js';
import type { RuntimeEvent } from '../../runtime/session-runtime.js';
import type { ToolStatus, UiItem } from './ui-items.js';

export interface TurnView {
  done: UiItem[];
  live: UiItem[];
  /** Which live item a stream key (`text:<messageId>`, `thought:<messageId>`, `tool:<callId>`) writes to. */
  keys: Record<string, string>;
  usage: { inputTokens: number; outputTokens: number };
}

export const emptyView = (done: UiItem[] = []): TurnView => ({ done, live: [], keys: {}, usage: { inputTokens: 0, outputTokens: 0 } });

export function applyEvent(view: TurnView, event: RuntimeEvent, newId: () => string): TurnView {
  switch (event.type) {
    case 'recovery_plan':
      return addDone(view, { id: newId(), type: 'status', text: `continuing: plan ${event.plan.planId} (${event.plan.kind})` });
    case 'user_prompt': {
      const text = event.parts.map((p) => p.text ?? '').join('');
      return text === '' ? view : addDone(view, { id: newId(), type: 'user', text });
    }
    case 'recovery_results': {
      const n = event.parts.length;
      return addDone(view, { id: newId(), type: 'status', text: `closed the interrupted turn with ${n} tool result${n === 1 ? '' : 's'} (none re-run)` });
    }
    case 'thought_delta':
      return appendLive(view, `thought:${event.messageId}`, 'thought', event.text, newId);
    case 'text_delta':
      return appendLive(view, `text:${event.messageId}`, 'assistant', event.text, newId);
    case 'assistant_message': {
      // Deltas may be missing (a provider that sends whole messages): the recorded parts are the truth.
      let next = view;
      const text = event.parts
        .filter((p) => !p.thought && p.text)
        .map((p) => p.text)
        .join('');
      if (!view.keys[`text:${event.messageId}`] && text !== '') next = appendLive(next, `text:${event.messageId}`, 'assistant', text, newId);
      return finishKeys(next, [`thought:${event.messageId}`, `text:${event.messageId}`]);
    }
    case 'tool_call_started': {
      const item: UiItem = { id: newId(), type: 'tool', callId: event.call.id, name: event.call.name, args: event.call.args, status: 'running', output: '' };
      return { ...view, live: [...view.live, item], keys: { ...view.keys, [`tool:${event.call.id}`]: item.id } };
    }
    case 'tool_call_finished': {
      const key = `tool:${event.call.id}`;
      const status = toolStatus(event.status);
      const output = event.display ?? event.output;
      if (!view.keys[key]) {
        return addDone(view, { id: newId(), type: 'tool', callId: event.call.id, name: event.call.name, args: event.call.args, status, output });
      }
      const updated = mapLive(view, view.keys[key]!, (item) => (item.type === 'tool' ? { ...item, status, output } : item));
      return finishKeys(updated, [key]);
    }
    case 'warning':
      return addDone(view, { id: newId(), type: 'status', text: `warning [${event.code}]: ${event.message}` });
    case 'turn_finished':
    case 'turn_failed':
    case 'turn_aborted': {
      const outcome = event.outcome;
      // A tool still running when the turn ended has no recorded outcome.
      const settled = { ...view, live: view.live.map((i) => (i.type === 'tool' && i.status === 'running' ? { ...i, status: 'unknown' as const } : i)) };
      let next = finishKeys(settled, Object.keys(view.keys));
      next = {
        ...next,
        usage: { inputTokens: next.usage.inputTokens + outcome.usage.inputTokens, outputTokens: next.usage.outputTokens + outcome.usage.outputTokens },
      };
      if (event.type === 'turn_failed') {
        next = addDone(next, { id: newId(), type: 'error', code: outcome.error?.code ?? 'internal', message: outcome.error?.message ?? 'the turn failed' });
      }
      if (event.type === 'turn_aborted') {
        next = addDone(next, { id: newId(), type: 'status', text: `turn aborted (${outcome.abortReason ?? 'interrupt'}); recorded in the log` });
      }
      return next;
    }
    // Nothing to draw: text and thoughts are drawn from their deltas, a tool once it runs (its
    // arguments whole), and an approval by the controller's own prompt.
    case 'turn_started':
    case 'message_start':
    case 'message_end':
    case 'tool_input_start':
    case 'tool_input_delta':
    case 'tool_approval_requested':
      return view;
  }
}

export function addDone(view: TurnView, item: UiItem): TurnView {
  return { ...view, done: [...view.done, item] };
}

function toolStatus(status: ToolCallStatus): ToolStatus {
  switch (status) {
    case 'success':
      return 'done';
    case 'error':
      return 'failed';
    case 'denied':
      return 'denied';
    case 'cancelled':
    case 'not_started':
      return 'cancelled';
  }
}

function appendLive(view: TurnView, key: string, type: 'assistant' | 'thought', text: string, newId: () => string): TurnView {
  const id = view.keys[key];
  if (id) return mapLive(view, id, (item) => (item.type === type ? { ...item, text: item.text + text } : item));
  const item: UiItem = { id: newId(), type, text };
  return { ...view, live: [...view.live, item], keys: { ...view.keys, [key]: item.id } };
}

function mapLive(view: TurnView, id: string, f: (item: UiItem) => UiItem): TurnView {
  return { ...view, live: view.live.map((item) => (item.id === id ? f(item) : item)) };
}

/** Moves the items of these keys from live to done, in their live order. */
function finishKeys(view: TurnView, keys: string[]): TurnView {
  const ids = new Set(keys.map((k) => view.keys[k]).filter((id): id is string => id !== undefined));
  if (ids.size === 0) return view;
  const rest = Object.fromEntries(Object.entries(view.keys).filter(([k]) => !keys.includes(k)));
  return {
    ...view,
    done: [...view.done, ...view.live.filter((i) => ids.has(i.id))],
    live: view.live.filter((i) => !ids.has(i.id)),
    keys: rest,
  };
}
