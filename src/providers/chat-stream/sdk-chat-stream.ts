/**
 * The `openai` package as a ChatStreamTransport: its client does the request, retries,
 * timeout and SSE parsing. The oracle of http-chat-stream.ts, and the transport under
 * `MEND_OPENAI_TRANSPORT=sdk`.
 */
import type OpenAI from 'openai';
import { readBodyHead } from '../openai-diagnostics.js';
import type { ChatStreamTransport, ChatTransportSettings } from './chat-stream.js';

export async function sdkChatStream(settings: ChatTransportSettings): Promise<ChatStreamTransport> {
  const { OpenAI } = await import('openai');
  const client = new OpenAI({
    apiKey: settings.apiKey,
    // Every option is passed explicitly so the library never falls back to OPENAI_* variables:
    // settings reach mend's modules only through their callers.
    baseURL: settings.baseURL,
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    maxRetries: settings.maxRetries,
    timeout: settings.timeoutMs,
    // Errors reach the user through MendError; the library must not print to our stderr.
    logLevel: 'off',
  });
  return {
    async open(body, { signal }) {
      const { data: stream, response } = await client.chat.completions
        .create({ ...body, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming, { signal, timeout: settings.timeoutMs })
        .withResponse();
      return {
        contentType: response.headers.get('content-type') ?? '',
        chunks: stream,
        readBody: (maxBytes) => readBodyHead(response.body, maxBytes),
      };
    },
  };
}
