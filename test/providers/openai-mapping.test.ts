import { describe, expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import { ChatChunkMapper, mapFinishReason } from '../../src/providers/openai-chunks.js';
import { toChatMessages, toolResultContent } from '../../src/providers/openai-messages.js';
import { redactSecrets } from '../../src/providers/redact-secrets.js';

describe('toChatMessages', () => {
  it('puts tool messages before user text in the same entry', () => {
    expect(
      toChatMessages([
        { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'x', args: {} } }] },
        { role: 'user', parts: [{ text: 'also this' }, { functionResponse: { id: 'c1', name: 'x', response: { output: 'done' } } }] },
      ]),
    ).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'x', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
      { role: 'user', content: 'also this' },
    ]);
  });

  it('sends separate user text parts as separate content parts, never glued', () => {
    expect(toChatMessages([{ role: 'user', parts: [{ text: 'stalled TRAIL6' }, { text: 'new prompt NEW6' }] }])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'stalled TRAIL6' },
          { type: 'text', text: 'new prompt NEW6' },
        ],
      },
    ]);
    // Two user entries in a row (an interrupted prompt, then a new one) merge into one message with two parts.
    const merged = toChatMessages([
      { role: 'user', parts: [{ text: 'Line one.' }] },
      { role: 'user', parts: [{ text: 'Line two.' }] },
    ]);
    expect(merged).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Line one.' },
          { type: 'text', text: 'Line two.' },
        ],
      },
    ]);
  });

  it('joins assistant text parts with a blank line and leaves thoughts out', () => {
    expect(
      toChatMessages([
        { role: 'model', parts: [{ text: 'Step one.' }, { text: 'hidden', thought: true }] },
        { role: 'model', parts: [{ text: 'Final answer.' }] },
      ]),
    ).toEqual([{ role: 'assistant', content: 'Step one.\n\nFinal answer.' }]);
  });

  it('sends inline images as image_url parts, so an image-only prompt is not dropped', () => {
    expect(toChatMessages([{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] }])).toEqual([
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
    ]);
    const mixed = toChatMessages([{ role: 'user', parts: [{ text: 'what is this?' }, { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } }] }]);
    expect(mixed[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
      ],
    });
  });

  it('keeps a short placeholder for parts it cannot send instead of dropping them', () => {
    const [message] = toChatMessages([
      {
        role: 'user',
        parts: [
          { inlineData: { mimeType: 'application/pdf', data: 'AAAA' } },
          { fileData: { mimeType: 'text/plain', fileUri: 'gs://bucket/a.txt' } },
          { executableCode: { code: 'print(1)' } },
        ],
      },
    ]);
    expect(message).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: '[attachment of type application/pdf (3 bytes) not sent: this provider accepts images only]' },
        { type: 'text', text: '[file gs://bucket/a.txt (text/plain) not sent: this provider cannot fetch files]' },
        { type: 'text', text: '[a executableCode part was not sent: this provider does not support it]' },
      ],
    });
  });

  it('sends a call whose arguments were not valid JSON back with its raw text', () => {
    const [assistant] = toChatMessages([
      { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'edit', args: {}, rawArgs: '{"file_path": "/x", "old', argsError: 'Unexpected end' } }] },
    ]);
    expect(assistant).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'edit', arguments: '{"file_path": "/x", "old' } }],
    });
  });

  it('raises invalid_history for calls or responses without an id', () => {
    const call = (): unknown => toChatMessages([{ role: 'model', parts: [{ functionCall: { name: 'x', args: {} } }] }]);
    const response = (): unknown => toChatMessages([{ role: 'user', parts: [{ functionResponse: { name: 'x', response: {} } }] }]);
    for (const fn of [call, response]) {
      try {
        fn();
        expect.unreachable();
      } catch (error) {
        expect(isMendError(error, 'invalid_history')).toBe(true);
      }
    }
  });

  it('sends output or error strings, JSON otherwise', () => {
    expect(toolResultContent({ name: 'x', response: { output: 'o' } })).toBe('o');
    expect(toolResultContent({ name: 'x', response: { error: 'e' } })).toBe('e');
    expect(toolResultContent({ name: 'x', response: { output: { n: 1 } } })).toBe('{"output":{"n":1}}');
  });
});

describe('ChatChunkMapper', () => {
  it('waits for a name before starting a call and invents missing ids', () => {
    const mapper = new ChatChunkMapper();
    expect(mapper.map({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] } }] })).toEqual([]);
    const started = mapper.map({ choices: [{ delta: { tool_calls: [{ index: 0, function: { name: 'x', arguments: ':1}' } }] } }] });
    expect(started).toMatchObject([
      { type: 'tool_call_start', index: 0, name: 'x' },
      { type: 'tool_call_delta', index: 0, argsDelta: '{"a":1}' },
    ]);
    expect((started[0] as { id: string }).id).toMatch(/^call_/);
  });

  it('assigns indexes by id when a server omits them', () => {
    const mapper = new ChatChunkMapper();
    const events = [
      ...mapper.map({ choices: [{ delta: { tool_calls: [{ id: 'a', function: { name: 'x', arguments: '{' } }] } }] }),
      ...mapper.map({ choices: [{ delta: { tool_calls: [{ function: { arguments: '}' } }] } }] }),
      ...mapper.map({
        choices: [{ delta: { tool_calls: [{ id: 'b', function: { name: 'y', arguments: '{}' } }] } }],
        usage: { prompt_tokens: 1, completion_tokens: 2 },
      }),
      ...mapper.end(),
    ];
    expect(events).toEqual([
      { type: 'tool_call_start', index: 0, id: 'a', name: 'x' },
      { type: 'tool_call_delta', index: 0, argsDelta: '{' },
      { type: 'tool_call_delta', index: 0, argsDelta: '}' },
      { type: 'tool_call_start', index: 1, id: 'b', name: 'y' },
      { type: 'tool_call_delta', index: 1, argsDelta: '{}' },
      { type: 'finish', stopReason: 'tool_use', usage: { inputTokens: 1, outputTokens: 2 } },
    ]);
    expect(mapper.finished).toBe(false);
  });

  it('ignores non-object chunks', () => {
    const mapper = new ChatChunkMapper();
    expect(mapper.map('garbage')).toEqual([]);
    expect(mapper.map(null)).toEqual([]);
    expect(mapper.ignoredChunks).toBe(2);
  });

  it('maps finish reasons', () => {
    expect(mapFinishReason('stop', false)).toBe('end_turn');
    expect(mapFinishReason('stop', true)).toBe('tool_use');
    expect(mapFinishReason('tool_calls', false)).toBe('tool_use');
    expect(mapFinishReason('length', false)).toBe('max_tokens');
    expect(mapFinishReason('content_filter', false)).toBe('other');
  });
});

describe('redactSecrets', () => {
  it('removes the key, bearer tokens and key-shaped strings', () => {
    const out = redactSecrets('key my-custom-key-123 auth Bearer abc.def other sk-proj-XYZ123', ['my-custom-key-123']);
    expect(out).toBe('key [redacted] auth Bearer [redacted] other sk-[redacted]');
  });
});
