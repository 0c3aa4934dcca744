import { afterEach, describe, expect, it } from 'vitest';
import { isMendError, type MendError } from '../../src/errors.js';
import { displayURL } from '../../src/providers/openai-diagnostics.js';
import { CHAT_TRANSPORT_KINDS } from '../../src/providers/chat-stream/chat-stream.js';
import { OpenAIProvider } from '../../src/providers/openai-provider.js';
import { collectResponse, type ModelRequest, type ProviderEvent } from '../../src/providers/provider.js';
import type { Content } from '../../src/session/records.js';
import { chunkOf, sendChunk, sendSse, startOpenAIServer, startSse, usageChunk, type OpenAIServer } from '../support/openai-server.js';

const KEY = 'sk-test-SECRET';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function drain(events: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

async function failure(promise: Promise<unknown>): Promise<MendError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isMendError(error)) throw new Error(`expected a MendError, got ${String(error)}`);
  return error;
}

const userText = (text: string): Content => ({ role: 'user', parts: [{ text }] });

// Every case runs over both transports: node's HTTP client, and the `openai` package it is tested against.
describe.each(CHAT_TRANSPORT_KINDS)('over the %s transport', (transport) => {
  function provider(baseURL: string, extra: Partial<ConstructorParameters<typeof OpenAIProvider>[0]> = {}): OpenAIProvider {
    return new OpenAIProvider({ apiKey: KEY, baseURL, model: 'test-model', maxRetries: 0, timeoutMs: 5_000, transport, ...extra });
  }

  describe('OpenAIProvider against a loopback chat-completions server', () => {
    it('streams text deltas and reports usage', async () => {
      server = await startOpenAIServer((_req, res) =>
        sendSse(res, [
          chunkOf({ role: 'assistant', content: '' }),
          chunkOf({ content: 'Hel' }),
          chunkOf({ content: 'lo!' }),
          chunkOf({}, 'stop'),
          usageChunk(12, 3),
        ]),
      );
      const events = await drain(provider(server.baseURL).stream({ history: [userText('hi')], tools: [], systemPrompt: 'be brief' }));
      expect(events).toEqual([
        { type: 'text_delta', text: 'Hel' },
        { type: 'text_delta', text: 'lo!' },
        { type: 'finish', stopReason: 'end_turn', usage: { inputTokens: 12, outputTokens: 3 } },
      ]);

      const [request] = server.requests;
      expect(request?.method).toBe('POST');
      expect(request?.url).toBe('/v1/chat/completions');
      expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(request?.body).toMatchObject({
        model: 'test-model',
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hi' },
        ],
      });
      // No tools declared: no empty `tools` array either.
      expect(request?.body).not.toHaveProperty('tools');
    });

    it('assembles tool-call deltas split across chunks and maps the history it sends', async () => {
      server = await startOpenAIServer((_req, res) =>
        sendSse(res, [
          chunkOf({
            role: 'assistant',
            content: null,
            tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '' } }],
          }),
          chunkOf({ tool_calls: [{ index: 0, function: { arguments: '{"file_' } }] }),
          chunkOf({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'list_directory', arguments: '{"pa' } }] }),
          chunkOf({ tool_calls: [{ index: 0, function: { arguments: 'path":"/a.txt"}' } }] }),
          chunkOf({ tool_calls: [{ index: 1, function: { arguments: 'th":"/b"}' } }] }),
          chunkOf({}, 'tool_calls'),
          usageChunk(40, 20),
        ]),
      );
      const history: Content[] = [
        userText('look around'),
        {
          role: 'model',
          parts: [
            { text: 'private reasoning', thought: true },
            { text: 'Let me look.' },
            { functionCall: { id: 'c1', name: 'run_shell_command', args: { command: 'ls' } } },
            { functionCall: { id: 'c2', name: 'read_file', args: { file_path: '/x' } } },
          ],
        },
        {
          role: 'user',
          parts: [{ functionResponse: { id: 'c1', name: 'run_shell_command', response: { output: 'a.txt' } } }],
        },
        {
          role: 'user',
          parts: [{ functionResponse: { id: 'c2', name: 'read_file', response: { error: 'File not found' } } }],
        },
        { role: 'model', parts: [{ text: 'Only thinking', thought: true }] },
        userText('continue'),
      ];
      const req: ModelRequest = {
        history,
        tools: [{ name: 'read_file', description: 'Reads a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } } } }],
      };
      const response = await collectResponse(provider(server.baseURL).stream(req));
      expect(response.parts).toEqual([
        { functionCall: { id: 'call_a', name: 'read_file', args: { file_path: '/a.txt' } } },
        { functionCall: { id: 'call_b', name: 'list_directory', args: { path: '/b' } } },
      ]);
      expect(response.stopReason).toBe('tool_use');
      expect(response.usage).toEqual({ inputTokens: 40, outputTokens: 20 });
      expect(response.problems).toEqual([]);

      const body = server.requests[0]?.body as Record<string, unknown>;
      expect(body.messages).toEqual([
        { role: 'user', content: 'look around' },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'run_shell_command', arguments: '{"command":"ls"}' } },
            { id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"/x"}' } },
          ],
        },
        // Consecutive user entries merge; each functionResponse becomes its own tool message.
        { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
        { role: 'tool', tool_call_id: 'c2', content: 'File not found' },
        // The thought-only model entry is not sent.
        { role: 'user', content: 'continue' },
      ]);
      expect(body.tools).toEqual([
        {
          type: 'function',
          function: { name: 'read_file', description: 'Reads a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } } } },
        },
      ]);
    });

    it('sends an image-only prompt and separate text parts as content parts', async () => {
      server = await startOpenAIServer((_req, res) => sendSse(res, [chunkOf({ content: 'a cat' }), chunkOf({}, 'stop')]));
      const history: Content[] = [
        { role: 'user', parts: [{ text: 'first prompt' }, { text: 'second prompt' }] },
        { role: 'model', parts: [{ text: 'ok' }] },
        { role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] },
      ];
      await drain(provider(server.baseURL).stream({ history, tools: [] }));
      expect((server.requests[0]?.body as { messages: unknown[] }).messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'first prompt' },
            { type: 'text', text: 'second prompt' },
          ],
        },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
      ]);
    });

    it('maps reasoning deltas to thoughts and skips malformed fields without failing', async () => {
      server = await startOpenAIServer((_req, res) =>
        sendSse(res, [
          chunkOf({ reasoning_content: 'thinking...' }),
          { choices: 'not-an-array' },
          chunkOf({ content: 42 }),
          chunkOf({ content: 'ok' }),
          chunkOf({}, 'length'),
        ]),
      );
      const events = await drain(provider(server.baseURL).stream({ history: [userText('q')], tools: [] }));
      expect(events).toEqual([
        { type: 'thought_delta', text: 'thinking...' },
        { type: 'text_delta', text: 'ok' },
        { type: 'finish', stopReason: 'max_tokens', usage: { inputTokens: 0, outputTokens: 0 } },
      ]);
    });

    it.each([401, 500])('maps HTTP %i to provider_error without leaking the key', async (status) => {
      server = await startOpenAIServer((req, res) => {
        // A hostile or careless server that echoes the credentials back in its error.
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              message: `Incorrect API key provided: ${KEY}; header was ${String(req.headers.authorization)}`,
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          }),
        );
      });
      const error = await failure(drain(provider(server.baseURL).stream({ history: [userText('q')], tools: [] })));
      expect(error.code).toBe('provider_error');
      expect(error.details?.status).toBe(status);
      expect(error.message).toContain(String(status));
      expect(error.message).toContain('Incorrect API key provided');
      const everything = `${error.message} ${JSON.stringify(error.details)} ${String(error.cause)} ${error.stack ?? ''}`;
      expect(everything).not.toContain('SECRET');
      expect(server.requests).toHaveLength(1);
    });

    it('reports a missing apiKey or model only when a model call is made', async () => {
      server = await startOpenAIServer((_req, res) => sendSse(res, []));
      const noKey = new OpenAIProvider({ baseURL: server.baseURL, model: 'm' });
      const noModel = new OpenAIProvider({ apiKey: KEY, baseURL: server.baseURL });
      const keyError = await failure(drain(noKey.stream({ history: [userText('q')], tools: [] })));
      expect(keyError.code).toBe('provider_config_missing');
      expect(keyError.details?.missing).toEqual(['apiKey']);
      const modelError = await failure(drain(noModel.stream({ history: [userText('q')], tools: [] })));
      expect(modelError.code).toBe('provider_config_missing');
      expect(modelError.details?.missing).toEqual(['model']);
      expect(server.requests).toHaveLength(0);
    });

    it('stops a stream when the signal aborts', async () => {
      server = await startOpenAIServer((_req, res) => {
        startSse(res);
        sendChunk(res, chunkOf({ content: 'first' }));
        // ...and never finishes.
      });
      const controller = new AbortController();
      const seen: ProviderEvent[] = [];
      const run = (async () => {
        for await (const event of provider(server.baseURL).stream({ history: [userText('q')], tools: [], signal: controller.signal })) {
          seen.push(event);
          controller.abort();
        }
      })();
      const error = await failure(run);
      expect(error.code).toBe('aborted');
      expect(seen).toEqual([{ type: 'text_delta', text: 'first' }]);
    });

    it('turns a stream that goes silent into provider_error instead of hanging', async () => {
      server = await startOpenAIServer((_req, res) => {
        startSse(res);
        sendChunk(res, chunkOf({ content: 'partial' }));
      });
      const started = Date.now();
      const error = await failure(drain(provider(server.baseURL, { timeoutMs: 300 }).stream({ history: [userText('q')], tools: [] })));
      expect(error.code).toBe('provider_error');
      expect(error.details?.reason).toBe('idle_timeout');
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it.each(['end', 'destroy'] as const)('reports a stream cut off before finish_reason (%s) as provider_error', async (how) => {
      server = await startOpenAIServer((_req, res) => {
        startSse(res);
        sendChunk(res, chunkOf({ content: 'partial' }));
        setTimeout(() => (how === 'end' ? res.end() : res.destroy()), 20);
      });
      const seen: ProviderEvent[] = [];
      const run = (async () => {
        for await (const event of provider(server.baseURL).stream({ history: [userText('q')], tools: [] })) seen.push(event);
      })();
      const error = await failure(run);
      expect(error.code).toBe('provider_error');
      expect(seen).toEqual([{ type: 'text_delta', text: 'partial' }]);
    });

    it('maps an unreachable server to provider_error', async () => {
      const closed = await startOpenAIServer(() => undefined);
      const baseURL = closed.baseURL;
      await closed.close();
      const error = await failure(drain(provider(baseURL).stream({ history: [userText('q')], tools: [] })));
      expect(error.code).toBe('provider_error');
      expect(error.details?.reason).toBe('connection');
    });
  });

  describe('provider errors say what happened and to which server', () => {
    it('a 200 whose body is neither an event stream nor JSON (an HTML page) names the URL and the content type', async () => {
      server = await startOpenAIServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>Welcome to nginx!</body></html>');
      });
      const error = await failure(drain(provider(server.baseURL).stream({ history: [userText('q')], tools: [] })));
      expect(error.code).toBe('provider_error');
      expect(error.message).toBe(
        `model server at ${server.baseURL} answered HTTP 200 with a body that is neither an event stream nor JSON (content-type: text/html); check the base URL`,
      );
      expect(error.details).toMatchObject({ reason: 'bad_response', status: 200, baseURL: server.baseURL });
    });

    it('accepts a whole JSON completion from a server that ignored stream: true', async () => {
      server = await startOpenAIServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: 'Reading.',
                  tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"a"}' } }],
                },
                finish_reason: 'tool_calls',
              },
            ],
            usage: { prompt_tokens: 3, completion_tokens: 4 },
          }),
        );
      });
      const response = await collectResponse(provider(server.baseURL).stream({ history: [userText('q')], tools: [] }));
      expect(response).toMatchObject({
        parts: [{ text: 'Reading.' }, { functionCall: { id: 'c1', name: 'read_file', args: { file_path: 'a' } } }],
        stopReason: 'tool_use',
        usage: { inputTokens: 3, outputTokens: 4 },
        finished: true,
      });
    });

    it('a 200 JSON error body is reported with its message and the URL', async () => {
      server = await startOpenAIServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `quota exceeded for ${KEY}` } }));
      });
      const error = await failure(drain(provider(server.baseURL).stream({ history: [userText('q')], tools: [] })));
      expect(error.message).toBe(`model server at ${server.baseURL} answered HTTP 200 with an error: quota exceeded for [redacted]`);
    });

    it('a connection cut mid-stream says so, with the URL and how far the stream got', async () => {
      server = await startOpenAIServer((_req, res) => {
        startSse(res);
        sendChunk(res, chunkOf({ content: 'partial' }));
        setTimeout(() => res.destroy(), 20);
      });
      const error = await failure(drain(provider(server.baseURL).stream({ history: [userText('q')], tools: [] })));
      expect(error.message).toMatch(
        new RegExp(
          `^model server at ${server.baseURL.replace(/[.]/g, '\\.')} cut the connection mid-response \\((terminated|aborted).*\\) after 1 chunk\\(s\\)$`,
        ),
      );
      expect(error.details?.reason).toBe('connection_lost');
    });

    it('a stream that ends cleanly without finish_reason names the URL', async () => {
      server = await startOpenAIServer((_req, res) => {
        startSse(res);
        sendChunk(res, chunkOf({ content: 'partial' }));
        res.end();
      });
      const error = await failure(drain(provider(server.baseURL).stream({ history: [userText('q')], tools: [] })));
      expect(error.message).toBe(`model stream from ${server.baseURL} ended before the response finished (no finish_reason after 1 chunk(s))`);
    });

    it('connection refused names the URL and the cause, never the key', async () => {
      const closed = await startOpenAIServer(() => undefined);
      const baseURL = closed.baseURL;
      await closed.close();
      const error = await failure(drain(provider(`${baseURL}?api-key=${KEY}`).stream({ history: [userText('q')], tools: [] })));
      expect(error.message).toBe(`could not reach the model server at ${baseURL}: connection refused (ECONNREFUSED)`);
      expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain('SECRET');
    });

    it('displayURL drops user info, query and fragment', () => {
      expect(displayURL('https://user:pw@example.com/v1/?key=abc#x')).toBe('https://example.com/v1');
      expect(displayURL('not a url')).toBe('(invalid base URL)');
    });
  });
});
