/**
 * Maps mend's Gemini-shaped history onto OpenAI chat-completions messages. Pure, so the
 * mapping is testable without a server.
 */
import type OpenAI from 'openai';
import { MendError } from '../errors.js';
import type { Content, FunctionResponse, Part } from '../session/records.js';
import { mergeConsecutiveRoles } from './merge-roles.js';
import type { ToolDeclaration } from './provider.js';

// Type-only import: erased at runtime, so `openai` is still loaded lazily.
export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;
type ToolCallParam = OpenAI.Chat.Completions.ChatCompletionMessageToolCall;

export function toChatMessages(history: readonly Content[], systemPrompt?: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (systemPrompt) messages.push({ role: 'system', content: systemPrompt });
  // Two model entries in a row would become two assistant messages, and tool results can
  // only follow the one that made the calls; merging first keeps the sequence valid.
  const merged = mergeConsecutiveRoles(history);
  merged.forEach((entry, entryIndex) => {
    if (entry.role === 'model') {
      const assistant = toAssistantMessage(entry.parts, entryIndex);
      if (assistant) messages.push(assistant);
    } else {
      messages.push(...toUserMessages(entry.parts, entryIndex));
    }
  });
  return messages;
}

function visibleText(parts: readonly Part[]): string {
  // Thoughts are the model's private reasoning: they are recorded but never sent back.
  return parts
    .filter((part) => typeof part.text === 'string' && part.thought !== true)
    .map((part) => part.text)
    .join('');
}

function toAssistantMessage(parts: readonly Part[], entryIndex: number): ChatMessage | undefined {
  const text = visibleText(parts);
  const toolCalls: ToolCallParam[] = [];
  for (const part of parts) {
    const call = part.functionCall;
    if (!call) continue;
    if (!call.id) {
      throw new MendError('invalid_history', `function call "${call.name}" in history entry ${entryIndex} has no id`, {
        entryIndex,
        name: call.name,
      });
    }
    toolCalls.push({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
    });
  }
  // An entry holding only thoughts has nothing to send; an empty assistant message is rejected by the API.
  if (!text && toolCalls.length === 0) return undefined;
  return {
    role: 'assistant',
    content: text || null,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

function toUserMessages(parts: readonly Part[], entryIndex: number): ChatMessage[] {
  // Tool messages must directly follow the assistant message that made the calls, so
  // they go first even when a user entry also carries text.
  const tools: ChatMessage[] = [];
  for (const part of parts) {
    const response = part.functionResponse;
    if (!response) continue;
    if (!response.id) {
      throw new MendError('invalid_history', `function response "${response.name}" in history entry ${entryIndex} has no id`, {
        entryIndex,
        name: response.name,
      });
    }
    tools.push({ role: 'tool', tool_call_id: response.id, content: toolResultContent(response) });
  }
  const text = visibleText(parts);
  return text ? [...tools, { role: 'user', content: text }] : tools;
}

/** The model reads a plain string best; structured responses fall back to JSON. */
export function toolResultContent(response: FunctionResponse): string {
  const { output, error } = response.response;
  if (typeof output === 'string') return output;
  if (typeof error === 'string') return error;
  return JSON.stringify(response.response);
}

export function toChatTools(tools: readonly ToolDeclaration[]): ChatTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}
