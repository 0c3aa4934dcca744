/**
 * Domain -> ACP `session/update` payloads, using only the protocol's own update
 * kinds (the SDK's client drops any other) plus `_meta`. Three sources: the
 * recorded conversation (replayed on `session/load`), the runtime's events while a
 * turn runs, and the recovery plan (the notice, `/plan`). Pure: nothing here sends.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { TurnOutcome } from '../../engine/engine-events.js';
import { isSyntheticReason, syntheticReasonFor } from '../../recovery/synthetic-result.js';
import type { RuntimeEvent } from '../../runtime/session-runtime.js';
import { toolKindOf } from '../../runtime/tool-port.js';
import type { LoadedSession } from '../../session/conversation.js';
import type { ChatRecord, Content, FunctionResponse, Part } from '../../session/records.js';
import type { RecoverySummaryCamel } from '../../wire/recovery-summary.js';

export type SessionUpdate = acp.SessionUpdate;

// ---- tools ----------------------------------------------------------------------------------

/** ACP's tool kind for a tool name (mend's kinds are a subset of ACP's). */
export function acpToolKind(name: string): acp.ToolKind {
  return toolKindOf(name) ?? 'other';
}

/** A short human title: what the call does, not just the tool's name. */
export function toolCallTitle(name: string, args: Record<string, unknown>): string {
  const str = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
  const subject = str('description') ?? str('command') ?? str('file_path') ?? str('path');
  if (subject === undefined) return name;
  const oneLine = subject.replace(/\s+/g, ' ').trim();
  return `${name}: ${oneLine.length > 120 ? `${oneLine.slice(0, 117)}...` : oneLine}`;
}

function textContent(text: string): acp.ToolCallContent[] {
  return text === '' ? [] : [{ type: 'content', content: { type: 'text', text } }];
}

function responseText(response: FunctionResponse['response']): { text: string; isError: boolean } {
  const isError = response['error'] !== undefined;
  const value = isError ? response['error'] : response['output'];
  return { text: typeof value === 'string' ? value : JSON.stringify(value ?? response), isError };
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

/**
 * The whole active conversation as `session/update`s, oldest first: user text,
 * agent text and thoughts, and every tool call once, with the status its recorded
 * result gives it. A call whose result is missing, or was synthesized by a recovery,
 * is `failed` with the outcome-unknown text (`_meta.mend.outcomeUnknown`).
 */
export function replayUpdates(loaded: LoadedSession): SessionUpdate[] {
  const conversation = loaded.conversation;
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
      const args = call.args ?? {};
      const base = {
        toolCallId: call.id ?? `${messageId ?? 'entry'}:call-without-id-${++withoutId}`,
        title: toolCallTitle(call.name, args),
        kind: acpToolKind(call.name),
        rawInput: args,
      };
      const result = call.id === undefined ? undefined : results.get(call.id);
      if (!result || isSyntheticResult(result)) {
        updates.push({
          sessionUpdate: 'tool_call',
          ...base,
          status: 'failed',
          content: textContent(syntheticReasonFor(call.name)),
          _meta: { mend: { outcomeUnknown: true, resultRecorded: result !== undefined } },
        });
        continue;
      }
      const { text } = responseText(result.response.response);
      updates.push({ sessionUpdate: 'tool_call', ...base, status: recordedStatus(result), content: textContent(text), rawOutput: result.response.response });
    }
  }
  return updates;
}

// ---- live turns ----------------------------------------------------------------------------

/** The `session/update`s one runtime event stands for (none for most). */
export function liveUpdates(event: RuntimeEvent): SessionUpdate[] {
  switch (event.type) {
    case 'text_delta':
      return event.text === '' ? [] : [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.text }, messageId: event.messageId }];
    case 'thought_delta':
      return event.text === '' ? [] : [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: event.text }, messageId: event.messageId }];
    case 'assistant_message':
      // The recorded response: its calls are complete now (arguments included), none has started.
      return event.parts.flatMap((part): SessionUpdate[] => {
        const call = part.functionCall;
        if (!call) return [];
        const args = call.args ?? {};
        return [
          {
            sessionUpdate: 'tool_call',
            toolCallId: call.id ?? '',
            title: toolCallTitle(call.name, args),
            kind: acpToolKind(call.name),
            status: 'pending',
            rawInput: args,
          },
        ];
      });
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
    default:
      return [];
  }
}

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

// ---- prompts ---------------------------------------------------------------------------------

/** ACP prompt blocks -> the parts of a user record. Text, links, embedded text resources and images. */
export function promptParts(blocks: readonly acp.ContentBlock[]): Part[] {
  const parts: Part[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') parts.push({ text: block.text });
        break;
      case 'resource_link':
        parts.push({ text: `[${block.title ?? block.name}](${block.uri})` });
        break;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource && typeof resource.text === 'string') {
          parts.push({ text: `<context uri="${resource.uri}">\n${resource.text}\n</context>` });
        } else {
          parts.push({ text: `[binary resource](${resource.uri})` });
        }
        break;
      }
      case 'image':
        parts.push({ inlineData: { mimeType: block.mimeType, data: block.data } } as Part);
        break;
      case 'audio':
        parts.push({ text: '[audio clip: not supported, left out]' });
        break;
    }
  }
  return parts;
}

/** The text of a prompt that is only text (for `/continue` and `/plan`), or null. */
export function promptCommand(blocks: readonly acp.ContentBlock[]): string | null {
  if (blocks.length === 0 || blocks.some((b) => b.type !== 'text')) return null;
  return blocks
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('')
    .trim();
}

// ---- the recovery plan, for people ---------------------------------------------------------------

const NOTICE_TITLES: Record<RecoverySummaryCamel['kind'], string> = {
  interrupted_turn: 'The last turn was interrupted during a tool call',
  interrupted_prompt: 'The last prompt got no answer',
  degraded_history: 'The session history is damaged',
  clean: 'The session log was repaired on load',
};

/** The notice a load or resume shows (null for a clean session that needed nothing). */
export function recoveryNotice(summary: RecoverySummaryCamel): { severity: 'info' | 'warning' | 'error'; title: string; description: string } | null {
  if (summary.visibleNotice === null) return null;
  const severity = summary.kind === 'degraded_history' ? 'error' : summary.kind === 'clean' ? 'info' : 'warning';
  const hint = summary.canContinue ? '\nType /continue to continue it, or /plan to see the recovery plan.' : '';
  return { severity, title: NOTICE_TITLES[summary.kind], description: `${summary.visibleNotice}${hint}` };
}

/** The plan as `/plan` and `/continue` show it. */
export function planText(summary: RecoverySummaryCamel | null): string {
  if (summary === null) return 'Recovery plan: none (the session has no records yet).';
  const lines = [`Recovery plan ${summary.planId}: ${summary.kind} (cause: ${summary.cause})`];
  if (summary.visibleNotice) lines.push(summary.visibleNotice);
  if (summary.repairs.length > 0) lines.push(`Repairs: ${summary.repairs.map((r) => `${r.type} x${r.count}`).join(', ')}`);
  if (summary.continuation) lines.push(`Continuation: ${summary.continuation.displayText}`);
  lines.push(
    summary.canContinue
      ? `Can continue${summary.requiresUserConfirmation ? ' (needs your confirmation: /continue)' : ''}.`
      : summary.kind === 'degraded_history'
        ? 'Cannot continue: a damaged history is never continued.'
        : 'Nothing to continue.',
  );
  return `${lines.join('\n')}\n`;
}
