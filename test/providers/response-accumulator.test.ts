import { describe, expect, it } from 'vitest';
import { ResponseAccumulator, collectResponse, type ProviderEvent } from '../../src/providers/provider.js';

const finish: ProviderEvent = { type: 'finish', stopReason: 'tool_use', usage: { inputTokens: 5, outputTokens: 7 } };

describe('ResponseAccumulator / collectResponse', () => {
  it('builds thought, text and function-call parts in index order', async () => {
    const response = await collectResponse([
      { type: 'thought_delta', text: 'hm' },
      { type: 'thought_delta', text: 'm' },
      { type: 'text_delta', text: 'Hello ' },
      { type: 'tool_call_start', index: 1, id: 'b', name: 'list_directory' },
      { type: 'tool_call_start', index: 0, id: 'a', name: 'read_file' },
      { type: 'text_delta', text: 'world' },
      { type: 'tool_call_delta', index: 0, argsDelta: '{"file_path":' },
      { type: 'tool_call_delta', index: 1, argsDelta: '' },
      { type: 'tool_call_delta', index: 0, argsDelta: '"/x"}' },
      finish,
    ]);
    expect(response).toEqual({
      parts: [
        { text: 'hmm', thought: true },
        { text: 'Hello world' },
        { functionCall: { id: 'a', name: 'read_file', args: { file_path: '/x' } } },
        { functionCall: { id: 'b', name: 'list_directory', args: {} } },
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 5, outputTokens: 7 },
      finished: true,
      problems: [],
    });
  });

  it('turns invalid JSON arguments into {} plus a problem instead of throwing', async () => {
    const response = await collectResponse([
      { type: 'tool_call_start', index: 0, id: 'a', name: 'edit' },
      { type: 'tool_call_delta', index: 0, argsDelta: '{"file_path": "/x", "old' },
      { type: 'tool_call_start', index: 1, id: 'b', name: 'edit' },
      { type: 'tool_call_delta', index: 1, argsDelta: '[1,2]' },
      finish,
    ]);
    expect(response.parts).toEqual([
      { functionCall: { id: 'a', name: 'edit', args: {} } },
      { functionCall: { id: 'b', name: 'edit', args: {} } },
    ]);
    expect(response.problems).toMatchObject([
      { code: 'invalid_tool_args', index: 0, id: 'a', name: 'edit', raw: '{"file_path": "/x", "old' },
      { code: 'invalid_tool_args', index: 1, id: 'b', reason: 'arguments are not a JSON object' },
    ]);
  });

  it('reports partial streams, stray deltas, unnamed calls and missing ids as problems', () => {
    const acc = new ResponseAccumulator();
    acc.push({ type: 'text_delta', text: 'partial' });
    acc.push({ type: 'tool_call_delta', index: 3, argsDelta: '{}' });
    acc.push({ type: 'tool_call_start', index: 0, id: 'x', name: '' });
    acc.push({ type: 'tool_call_start', index: 1, id: '', name: 'read_file' });
    acc.push({ type: 'tool_call_start', index: 1, id: 'again', name: 'read_file' });
    const result = acc.result();
    expect(result.finished).toBe(false);
    expect(result.stopReason).toBe('other');
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(result.parts[0]).toEqual({ text: 'partial' });
    expect(result.parts[1]?.functionCall?.id).toMatch(/^call_/);
    expect(result.parts).toHaveLength(2);
    expect(result.problems.map((p) => p.code)).toEqual([
      'delta_without_start',
      'duplicate_start',
      'tool_call_without_name',
      'tool_call_without_id',
      'missing_finish',
    ]);
  });

  it('propagates errors from the event stream', async () => {
    async function* failing(): AsyncGenerator<ProviderEvent> {
      yield { type: 'text_delta', text: 'a' };
      throw new Error('boom');
    }
    await expect(collectResponse(failing())).rejects.toThrow('boom');
  });
});
