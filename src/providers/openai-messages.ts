/**
 * Maps mend's Gemini-shaped history onto OpenAI chat-completions messages. Pure, so the
 * mapping is testable without a server.
 */
import type OpenAI from 'openai';
import { z } from 'zod';
import { MendError } from '../errors.js';
import type { Content, FunctionResponse, Part } from '../session/records.js';
import { mergeConsecutiveRoles } from './merge-roles.js';
import { invalidArgsOf, type ToolDeclaration } from './provider.js';

// Type-only import: erased at runtime, so `openai` is still loaded lazily.
export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;
type ToolCallParam = OpenAI.Chat.Completions.ChatCompletionMessageToolCall;
type UserContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

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

/** Thoughts are the model's private reasoning: they are recorded but never sent back. */
function visibleTexts(parts: readonly Part[]): string[] {
  return parts.filter((part) => typeof part.text === 'string' && part.text !== '' && part.thought !== true).map((part) => part.text as string);
}

function toAssistantMessage(parts: readonly Part[], entryIndex: number): ChatMessage | undefined {
  // Separate parts are separate blocks (two streamed records, two steps); gluing them with ''
  // would run sentences together, so a blank line keeps them apart.
  const text = visibleTexts(parts).join('\n\n');
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
      // Arguments that were not valid JSON go back as the model wrote them, so the history
      // shows the model its own mistake next to the error result, not a `{}` it never sent.
      function: { name: call.name, arguments: invalidArgsOf(part)?.raw ?? JSON.stringify(call.args ?? {}) },
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
  const content = userContent(parts);
  if (content.length === 0) return tools;
  // A lone text part stays a plain string: the form every compatible server accepts.
  const only = content[0];
  if (content.length === 1 && only?.type === 'text') return [...tools, { role: 'user', content: only.text }];
  return [...tools, { role: 'user', content }];
}

/**
 * Every user part except tool results, in order and each as its own content part: two
 * prompts of an interrupted turn must reach the model as two texts, not one glued string,
 * and an image-only prompt must not vanish. A part this mapping cannot send becomes a
 * short placeholder, so the model knows something was there.
 */
export function userContent(parts: readonly Part[]): UserContentPart[] {
  const content: UserContentPart[] = [];
  for (const part of parts) {
    if (part.functionResponse || part.functionCall || part.thought === true) continue;
    if (typeof part.text === 'string') {
      if (part.text !== '') content.push({ type: 'text', text: part.text });
      continue;
    }
    const inline = inlineDataOf(part);
    if (inline && inline.mimeType.startsWith('image/')) {
      content.push({ type: 'image_url', image_url: { url: `data:${inline.mimeType};base64,${inline.data}` } });
      continue;
    }
    const placeholder = placeholderFor(part, inline);
    if (placeholder) content.push({ type: 'text', text: placeholder });
  }
  return content;
}

const InlineDataSchema = z.object({ mimeType: z.string().min(1), data: z.string() });

function inlineDataOf(part: Part): z.infer<typeof InlineDataSchema> | undefined {
  const parsed = InlineDataSchema.safeParse((part as Record<string, unknown>).inlineData);
  return parsed.success ? parsed.data : undefined;
}

function placeholderFor(part: Part, inline: z.infer<typeof InlineDataSchema> | undefined): string | undefined {
  if (inline) return `[attachment of type ${inline.mimeType} (${Math.floor((inline.data.length * 3) / 4)} bytes) not sent: this provider accepts images only]`;
  const keys = Object.keys(part).filter((key) => key !== 'thought' && (part as Record<string, unknown>)[key] !== undefined);
  if (keys.length === 0) return undefined;
  const fileData = (part as Record<string, unknown>).fileData as { fileUri?: unknown; mimeType?: unknown } | undefined;
  if (fileData && typeof fileData.fileUri === 'string') {
    return `[file ${fileData.fileUri}${typeof fileData.mimeType === 'string' ? ` (${fileData.mimeType})` : ''} not sent: this provider cannot fetch files]`;
  }
  return `[a ${keys.join('/')} part was not sent: this provider does not support it]`;
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
