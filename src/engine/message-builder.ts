/** Turns recorded parts into stream-json output messages. */
import type { Part } from '../session/records.js';
import type { AssistantMessage, ContentBlock, ResultMessage, UserMessage } from '../stream/messages.js';

export function partsToBlocks(parts: readonly Part[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const part of parts) {
    if (part.functionCall) {
      blocks.push({ type: 'tool_use', id: part.functionCall.id ?? '', name: part.functionCall.name, input: part.functionCall.args ?? {} });
    } else if (part.thought === true && typeof part.text === 'string') {
      blocks.push({ type: 'thinking', thinking: part.text });
    } else if (typeof part.text === 'string') {
      blocks.push({ type: 'text', text: part.text });
    }
  }
  return blocks;
}

export function assistantMessage(input: {
  uuid: string;
  sessionId: string;
  messageId: string;
  model: string;
  parts: readonly Part[];
  stopReason: string | null;
  usage: { inputTokens: number; outputTokens: number };
}): AssistantMessage {
  return {
    type: 'assistant',
    uuid: input.uuid,
    session_id: input.sessionId,
    parent_tool_use_id: null,
    message: {
      id: input.messageId,
      type: 'message',
      role: 'assistant',
      model: input.model,
      content: partsToBlocks(input.parts),
      stop_reason: input.stopReason,
      usage: { input_tokens: input.usage.inputTokens, output_tokens: input.usage.outputTokens },
    },
  };
}

export function responseText(response: Record<string, unknown>): { text: string; isError: boolean } {
  const isError = response['error'] !== undefined;
  const value = isError ? response['error'] : response['output'];
  return { text: typeof value === 'string' ? value : JSON.stringify(value ?? response), isError };
}

export function toolResultMessage(uuid: string, sessionId: string, results: readonly Part[]): UserMessage {
  return {
    type: 'user',
    uuid,
    session_id: sessionId,
    parent_tool_use_id: null,
    message: {
      role: 'user',
      content: results
        .filter((p) => p.functionResponse)
        .map((p) => {
          const { text, isError } = responseText(p.functionResponse!.response);
          return { type: 'tool_result' as const, tool_use_id: p.functionResponse!.id ?? '', is_error: isError, content: text };
        }),
    },
  };
}

export type ResultFields = Pick<
  ResultMessage,
  'subtype' | 'is_error' | 'duration_ms' | 'duration_api_ms' | 'num_turns' | 'usage' | 'permission_denials'
> & { result?: string; error?: { code: string; message: string } };
