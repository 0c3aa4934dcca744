/**
 * Domain -> ACP `session/update` payloads: the one mapping for every front end
 * that speaks ACP updates. An ACP agent sends them as `session/update`
 * notifications; the daemon wraps the same objects in its journal envelope
 * (`session_update` events). Only the protocol's own update kinds (the SDK's
 * client drops any other), mend's extras under `_meta`. Pure: nothing here sends.
 *
 * Two sources: the recorded conversation (replayed on a load) and the runtime's
 * events while a turn runs. A replay shows every tool call once, as a `tool_call`
 * with the status its recorded result gives it; a call whose result is missing or
 * was synthesized by a recovery is `failed` with the outcome-unknown text and
 * `_meta.mend.outcomeUnknown`: nothing is running on a load, so `in_progress`
 * would be untrue, and the model is told the same outcome-unknown text.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { TurnOutcome } from '../../engine/engine-events.js';
import { isSyntheticReason, syntheticReasonFor } from '../../recovery/synthetic-result.js';
import type { RuntimeEvent } from '../../runtime/session-runtime.js';
import { toolKindOf } from '../../runtime/tool-port.js';
import type { ConversationRecord } from '../../session/conversation.js';
import type { ChatRecord, Content, FunctionResponse, Part } from '../../session/records.js';
import { responseText } from './wire-messages.js';

export type SessionUpdate = acp.SessionUpdate;

// ---- tools ----------------------------------------------------------------------------------

/** ACP's tool kind for a tool name (mend's kinds are a subset of ACP's). */
export function acpToolKind(name: string): acp.ToolKind {
  return toolKindOf(name) ?? 'other';
}

/** A short human title: what the call does (its description first), not just the tool's name. */
export function toolCallTitle(name: string, args: Record<string, unknown>): string {
  const str = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
  const subject = str('description') ?? str('command') ?? str('file_path') ?? str('path') ?? str('absolute_path');
  if (subject === undefined) return name;
  const oneLine = subject.replace(/\s+/g, ' ').trim();
  return `${name}: ${oneLine.length > 120 ? `${oneLine.slice(0, 117)}...` : oneLine}`;
}

/** The ACP tool call of a call the model made (a permission request shows the same). */
export function toolCallFields(call: { id?: string | undefined; name: string; args?: Record<string, unknown> | undefined }, id = call.id ?? '') {
  const args = call.args ?? {};
  return { toolCallId: id, title: toolCallTitle(call.name, args), kind: acpToolKind(call.name), rawInput: args };
}

function textContent(text: string): acp.ToolCallContent[] {
  return text === '' ? [] : [{ type: 'content', content: { type: 'text', text } }];
}

// ---- replay of the recorded conversation ------------------------------------------------------

interface Entry {
  content: Content;
  record?: ChatRecord;
}

interface RecordedResult {
  response: FunctionResponse;
  record?: ChatRecord;
}

function isSyntheticResult(result: RecordedResult): boolean {
  const record = result.record as { recovery?: { synthetic?: unknown } } | undefined;
  return record?.recovery?.synthetic === true || isSyntheticReason(result.response.response['error']);
}

function recordedStatus(result: RecordedResult): 'completed' | 'failed' {
  const status = (result.record as { toolCallResult?: { status?: unknown } } | undefined)?.toolCallResult?.status;
  if (result.response.response['error'] !== undefined) return 'failed';
  return status === 'error' || status === 'cancelled' ? 'failed' : 'completed';
}

function imageBlock(part: Part): acp.ContentBlock | null {
  const inline = (part as { inlineData?: { mimeType?: unknown; data?: unknown } }).inlineData;
  if (typeof inline?.mimeType !== 'string' || typeof inline.data !== 'string' || !inline.mimeType.startsWith('image/')) return null;
  return { type: 'image', mimeType: inline.mimeType, data: inline.data };
}

/** The whole active conversation as `session/update`s, oldest first (a compression checkpoint's history first). */
export function replayUpdates(conversation: ConversationRecord): SessionUpdate[] {
  const entries: Entry[] = (conversation.compressedHistory ?? []).map((content) => ({ content }));
  for (const record of conversation.records) {
    if (record.type === 'system') continue;
    entries.push({ content: { role: record.type === 'assistant' ? 'model' : 'user', parts: record.message.parts }, record });
  }

  const results = new Map<string, RecordedResult>();
  for (const { content, record } of entries) {
    for (const part of content.parts) {
      const response = part.functionResponse;
      if (response?.id !== undefined && !results.has(response.id)) results.set(response.id, record ? { response, record } : { response });
    }
  }

  const updates: SessionUpdate[] = [];
  let withoutId = 0;
  for (const { content, record } of entries) {
    const messageId = record?.uuid;
    const chunk = <K extends 'user_message_chunk' | 'agent_message_chunk' | 'agent_thought_chunk'>(kind: K, block: acp.ContentBlock): SessionUpdate =>
      ({ sessionUpdate: kind, content: block, ...(messageId ? { messageId } : {}) }) as SessionUpdate;
    for (const part of content.parts) {
      if (content.role === 'user') {
        if (typeof part.text === 'string' && part.text !== '' && part.thought !== true)
          updates.push(chunk('user_message_chunk', { type: 'text', text: part.text }));
        const image = imageBlock(part);
        if (image) updates.push(chunk('user_message_chunk', image));
        continue;
      }
      if (typeof part.text === 'string' && part.text !== '') {
        updates.push(chunk(part.thought === true ? 'agent_thought_chunk' : 'agent_message_chunk', { type: 'text', text: part.text }));
      }
      const call = part.functionCall;
      if (!call) continue;
      const base = toolCallFields(call, call.id ?? `${messageId ?? 'entry'}:call-without-id-${++withoutId}`);
      const result = call.id === undefined ? undefined : results.get(call.id);
      if (!result || isSyntheticResult(result)) {
        updates.push({
          sessionUpdate: 'tool_call',
          ...base,
          status: 'failed',
          content: textContent(syntheticReasonFor(call.name)),
          _meta: { toolName: call.name, mend: { outcomeUnknown: true, resultRecorded: result !== undefined } },
        });
        continue;
      }
      const { text } = responseText(result.response.response);
      updates.push({
        sessionUpdate: 'tool_call',
        ...base,
        status: recordedStatus(result),
        content: textContent(text),
        rawOutput: result.response.response,
        _meta: { toolName: call.name },
      });
    }
  }
  return updates;
}

// ---- live turns ----------------------------------------------------------------------------

export interface LiveOptions {
  /**
   * Echo each prompt as `user_message_chunk`s. For an audience of several clients (the
   * daemon's journal: every attached client sees who asked what); an ACP client shows
   * the prompt it sent itself.
   */
  echoPrompts?: boolean;
}

/** The `session/update`s one runtime event stands for (none for most). Pure per event. */
export function liveUpdates(event: RuntimeEvent, options: LiveOptions = {}): SessionUpdate[] {
  switch (event.type) {
    case 'user_prompt': {
      if (!options.echoPrompts) return [];
      const out: SessionUpdate[] = [];
      for (const part of event.parts) {
        if (typeof part.text === 'string' && part.text !== '')
          out.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: part.text }, messageId: event.uuid });
        const image = imageBlock(part);
        if (image) out.push({ sessionUpdate: 'user_message_chunk', content: image, messageId: event.uuid });
      }
      return out;
    }
    case 'text_delta':
      return event.text === '' ? [] : [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.text }, messageId: event.messageId }];
    case 'thought_delta':
      return event.text === '' ? [] : [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: event.text }, messageId: event.messageId }];
    case 'assistant_message': {
      // The streamed text went out as chunks; this empty chunk closes the message with its usage (as Qwen's replay does).
      const close: SessionUpdate = {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: '' },
        messageId: event.messageId,
        _meta: { usage: { inputTokens: event.usage.inputTokens, outputTokens: event.usage.outputTokens }, stopReason: event.stopReason },
      };
      // The recorded response: its calls are complete now (arguments included), none has started.
      const calls = event.parts.flatMap((part): SessionUpdate[] =>
        part.functionCall
          ? [{ sessionUpdate: 'tool_call', ...toolCallFields(part.functionCall), status: 'pending', _meta: { toolName: part.functionCall.name } }]
          : [],
      );
      return [close, ...calls];
    }
    case 'tool_call_started':
      return [{ sessionUpdate: 'tool_call_update', toolCallId: event.call.id, status: 'in_progress' }];
    case 'tool_call_finished': {
      const failed = event.isError || event.status !== 'success';
      return [
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: event.call.id,
          status: failed ? 'failed' : 'completed',
          content: textContent(event.display ?? event.output),
          rawOutput: event.result.functionResponse?.response ?? { output: event.output },
          _meta: { mend: { outcome: event.status } },
        },
      ];
    }
    case 'recovery_results':
      // A continuation closing the interrupted turn: each unfinished call gets its one answer.
      return event.parts.flatMap((part): SessionUpdate[] => {
        const response = part.functionResponse;
        if (!response?.id) return [];
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: response.id,
            status: 'failed',
            content: textContent(responseText(response.response).text),
            rawOutput: response.response,
            _meta: { mend: { outcomeUnknown: true, planId: event.planId } },
          },
        ];
      });
    // Nothing of their own in ACP: a message streams as its chunks and is closed by assistant_message,
    // a call is announced whole once recorded (arguments complete), approvals go through
    // session/request_permission, a turn's end is the prompt's answer (its stop reason), and the plan
    // travels under _meta.mend. ACP has no update for a warning: the daemon logs them, an ACP client
    // does not see them.
    case 'turn_started':
    case 'message_start':
    case 'message_end':
    case 'tool_input_start':
    case 'tool_input_delta':
    case 'tool_approval_requested':
    case 'turn_finished':
    case 'turn_failed':
    case 'turn_aborted':
    case 'recovery_plan':
    case 'warning':
      return [];
  }
}

/** ACP's stop reason for a turn's outcome (a failed turn ends the turn; its error travels beside). */
export function stopReasonOf(outcome: TurnOutcome): acp.StopReason {
  switch (outcome.status) {
    case 'success':
      return 'end_turn';
    case 'aborted':
      return 'cancelled';
    case 'max_turns':
      return 'max_turn_requests';
    case 'error':
      return 'end_turn';
  }
}
