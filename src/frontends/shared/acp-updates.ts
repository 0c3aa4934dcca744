/**
 * Domain -> ACP `session/update` payloads (stable v1 kinds only, mend's extras
 * under `_meta`): the replay of a loaded conversation and the live mapping of
 * runtime events. The daemon sends them as `session_update` events; an ACP
 * agent sends the same objects as notifications.
 *
 * Replay shows every tool call with its real status: a recorded result is
 * `completed` or `failed`, a synthetic result or none at all is `failed` with
 * the outcome-unknown text (the model is told the same).
 */
import type { RuntimeEvent } from '../../runtime/session-runtime.js';
import { SYNTHETIC_RESULT_REASON } from '../../recovery/synthetic-result.js';
import type { ConversationRecord } from '../../session/conversation.js';
import type { Content, Part } from '../../session/records.js';
import { responseText } from './wire-messages.js';

export type SessionUpdate = { sessionUpdate: string } & Record<string, unknown>;

type ToolKind = 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'think' | 'fetch' | 'switch_mode' | 'other';

const TOOL_KINDS: Readonly<Record<string, ToolKind>> = {
  read_file: 'read',
  list_directory: 'search',
  write_file: 'edit',
  edit: 'edit',
  run_shell_command: 'execute',
};

export function toolKind(name: string): ToolKind {
  return Object.hasOwn(TOOL_KINDS, name) ? TOOL_KINDS[name]! : 'other';
}

/** A one-line title: the tool and its most telling argument. */
export function toolTitle(name: string, args: Record<string, unknown>): string {
  const subject = ['command', 'file_path', 'path', 'absolute_path'].map((k) => args[k]).find((v) => typeof v === 'string');
  const text = typeof subject === 'string' ? `${name}: ${subject}` : name;
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

function textContent(text: string): Array<Record<string, unknown>> {
  return [{ type: 'content', content: { type: 'text', text } }];
}

function toolCall(id: string, name: string, args: Record<string, unknown>, status: 'pending' | 'in_progress'): SessionUpdate {
  return { sessionUpdate: 'tool_call', toolCallId: id, title: toolTitle(name, args), kind: toolKind(name), status, rawInput: args, _meta: { toolName: name } };
}

function toolResult(id: string, output: string, failed: boolean, extra: Record<string, unknown> = {}): SessionUpdate {
  return { sessionUpdate: 'tool_call_update', toolCallId: id, status: failed ? 'failed' : 'completed', content: textContent(output), ...extra };
}

function chunk(kind: 'user_message_chunk' | 'agent_message_chunk' | 'agent_thought_chunk', text: string): SessionUpdate {
  return { sessionUpdate: kind, content: { type: 'text', text } };
}

/** The updates of one history entry; `open` holds the call ids shown without a result yet. */
function entryUpdates(entry: Content, open: Map<string, true>, synthetic?: boolean): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  for (const part of entry.parts) {
    if (entry.role === 'model') {
      if (part.functionCall) {
        const id = part.functionCall.id ?? '';
        out.push(toolCall(id, part.functionCall.name, part.functionCall.args ?? {}, 'in_progress'));
        if (id) open.set(id, true);
      } else if (typeof part.text === 'string' && part.text !== '') {
        out.push(chunk(part.thought === true ? 'agent_thought_chunk' : 'agent_message_chunk', part.text));
      }
      continue;
    }
    if (part.functionResponse) {
      const id = part.functionResponse.id ?? '';
      const { text, isError } = responseText(part.functionResponse.response);
      out.push(toolResult(id, text, isError || synthetic === true, synthetic ? { _meta: { mend: { synthetic: true } } } : {}));
      open.delete(id);
    } else if (typeof part.text === 'string' && part.text !== '' && part.thought !== true) {
      out.push(chunk('user_message_chunk', part.text));
    }
  }
  return out;
}

/** The whole active conversation as updates, oldest first (a compression checkpoint's history first). */
export function replayUpdates(conversation: ConversationRecord): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  const open = new Map<string, true>();
  for (const entry of conversation.compressedHistory ?? []) out.push(...entryUpdates(entry, open));
  for (const record of conversation.records) {
    if (record.type === 'system') continue;
    const role = record.type === 'assistant' ? 'model' : 'user';
    const synthetic = record.type === 'tool_result' && record.recovery?.synthetic === true;
    out.push(...entryUpdates({ role, parts: record.message.parts }, open, synthetic));
  }
  for (const id of open.keys()) out.push(toolResult(id, SYNTHETIC_RESULT_REASON, true, { _meta: { mend: { resultMissing: true } } }));
  return out;
}

/** Live runtime events -> updates. Pure per event. */
export function liveUpdates(event: RuntimeEvent): SessionUpdate[] {
  switch (event.type) {
    case 'user_prompt':
      return event.parts.filter((p) => typeof p.text === 'string' && p.text !== '').map((p) => chunk('user_message_chunk', p.text!));
    case 'text_delta':
      return [{ ...chunk('agent_message_chunk', event.text), messageId: event.messageId }];
    case 'thought_delta':
      return [{ ...chunk('agent_thought_chunk', event.text), messageId: event.messageId }];
    case 'assistant_message': {
      // The streamed text was sent as chunks; this empty chunk closes the message with its usage (as Qwen's replay does).
      const close: SessionUpdate = {
        ...chunk('agent_message_chunk', ''),
        messageId: event.messageId,
        _meta: { usage: { inputTokens: event.usage.inputTokens, outputTokens: event.usage.outputTokens }, stopReason: event.stopReason },
      };
      const calls = event.parts.filter((p): p is Part & { functionCall: NonNullable<Part['functionCall']> } => p.functionCall !== undefined);
      return [close, ...calls.map((p) => toolCall(p.functionCall.id ?? '', p.functionCall.name, p.functionCall.args ?? {}, 'pending'))];
    }
    case 'tool_call_started':
      return [{ sessionUpdate: 'tool_call_update', toolCallId: event.call.id, status: 'in_progress' }];
    case 'tool_call_finished':
      return [toolResult(event.call.id, event.output, event.isError, { rawOutput: { output: event.output }, _meta: { mend: { status: event.status } } })];
    case 'recovery_results':
      return event.parts
        .filter((p) => p.functionResponse)
        .map((p) =>
          toolResult(p.functionResponse!.id ?? '', responseText(p.functionResponse!.response).text, true, {
            _meta: { mend: { synthetic: true, planId: event.planId } },
          }),
        );
    default:
      return [];
  }
}
