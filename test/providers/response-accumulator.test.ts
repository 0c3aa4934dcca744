import { describe, expect, it } from 'vitest';
import {
  MAX_CALLS_PER_RESPONSE,
  MAX_TOOL_ARGS_BYTES,
  OVERSIZED_ARGS_PREFIX_CHARS,
  ResponseAccumulator,
  collectResponse,
  invalidArgsOf,
  type ProviderEvent,
} from '../../src/providers/provider.js';
import type { Part } from '../../src/session/records.js';
import { invalidArgsMessage } from '../../src/tools/invalid-args.js';

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

  it('keeps invalid JSON arguments as raw text on the call part, with the reason, instead of a silent {}', async () => {
    const response = await collectResponse([
      { type: 'tool_call_start', index: 0, id: 'a', name: 'edit' },
      { type: 'tool_call_delta', index: 0, argsDelta: '{"file_path": "/x", "old' },
      { type: 'tool_call_start', index: 1, id: 'b', name: 'edit' },
      { type: 'tool_call_delta', index: 1, argsDelta: '[1,2]' },
      finish,
    ]);
    expect(response.parts).toEqual([
      { functionCall: { id: 'a', name: 'edit', args: {}, rawArgs: '{"file_path": "/x", "old', argsError: expect.stringContaining('JSON') } },
      { functionCall: { id: 'b', name: 'edit', args: {}, rawArgs: '[1,2]', argsError: 'arguments are not a JSON object' } },
    ]);
    expect(response.problems).toMatchObject([
      { code: 'invalid_tool_args', index: 0, id: 'a', name: 'edit', raw: '{"file_path": "/x", "old' },
      { code: 'invalid_tool_args', index: 1, id: 'b', reason: 'arguments are not a JSON object' },
    ]);
    expect(invalidArgsOf(response.parts[1] as Part)).toEqual({ raw: '[1,2]', reason: 'arguments are not a JSON object' });
    expect(invalidArgsOf({ functionCall: { id: 'c', name: 'edit', args: {} } })).toBeUndefined();
    expect(invalidArgsOf({ text: 'hi' })).toBeUndefined();
    // The model is told what was wrong, with its own text, and asked to retry.
    expect(invalidArgsMessage('edit', invalidArgsOf(response.parts[1] as Part) as { raw: string; reason: string })).toBe(
      'Your arguments for edit were not valid JSON (arguments are not a JSON object): [1,2]; call it again with a JSON object.',
    );
  });

  it('treats an argument text over MAX_TOOL_ARGS_BYTES as invalid and keeps only a prefix and the byte count', async () => {
    const piece = `{"content":"${'x'.repeat(64 * 1024)}`;
    const events: ProviderEvent[] = [{ type: 'tool_call_start', index: 0, id: 'big', name: 'write_file' }];
    let bytes = 0;
    while (bytes <= MAX_TOOL_ARGS_BYTES) {
      events.push({ type: 'tool_call_delta', index: 0, argsDelta: piece });
      bytes += piece.length;
    }
    events.push({ type: 'tool_call_delta', index: 0, argsDelta: '"}' }, finish);
    const response = await collectResponse(events);
    const invalid = invalidArgsOf(response.parts[0] as Part);
    expect(invalid?.raw).toHaveLength(OVERSIZED_ARGS_PREFIX_CHARS);
    expect(invalid?.reason).toBe(
      `arguments are ${bytes + 2} bytes, over the limit of ${MAX_TOOL_ARGS_BYTES} bytes; only the first ${OVERSIZED_ARGS_PREFIX_CHARS} characters were kept`,
    );
    expect(JSON.stringify(response).length).toBeLessThan(10_000);
    const shown = invalidArgsMessage('write_file', invalid as { raw: string; reason: string });
    expect(shown).toContain(`[${OVERSIZED_ARGS_PREFIX_CHARS - 1000} more characters]`);
  });

  it('records every call of a response, past MAX_CALLS_PER_RESPONSE too (the engine caps what runs and answers each call)', async () => {
    const n = MAX_CALLS_PER_RESPONSE + 2;
    const events: ProviderEvent[] = [];
    for (let i = 0; i < n; i++) {
      events.push(
        { type: 'tool_call_start', index: i, id: `c${i}`, name: 'read_file' },
        { type: 'tool_call_delta', index: i, argsDelta: `{"file_path":"/f${i}"}` },
      );
    }
    const response = await collectResponse([...events, finish]);
    expect(response.parts.map((p) => p.functionCall?.id)).toEqual(Array.from({ length: n }, (_, i) => `c${i}`));
    expect(response.parts.map((p) => p.functionCall?.args)).toEqual(Array.from({ length: n }, (_, i) => ({ file_path: `/f${i}` })));
    expect(response.problems).toEqual([]);
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
