/**
 * Gemini API replies: `:generateContent` answers as one JSON body, `:streamGenerateContent?alt=sse`
 * as `data:` frames of GenerateContentResponse chunks.
 */
import type { MockReply } from './model-mock.js';

const USAGE = { promptTokenCount: 12, candidatesTokenCount: 8, totalTokenCount: 20 };

function chunk(parts: Array<Record<string, unknown>>): Record<string, unknown> {
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE, modelVersion: 'gemini-mock' };
}

export function geminiJson(text: string): MockReply {
  return { kind: 'json', body: chunk([{ text }]) };
}

export function geminiStreamFunctionCall(name: string, args: Record<string, unknown>): MockReply {
  return { kind: 'sse', frames: [{ data: chunk([{ functionCall: { name, args } }]) }] };
}

export function geminiStreamText(text: string): MockReply {
  return { kind: 'sse', frames: [{ data: chunk([{ text }]) }] };
}
