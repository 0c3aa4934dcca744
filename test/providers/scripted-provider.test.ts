import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMendError, type MendError } from '../../src/errors.js';
import { collectResponse, type ProviderEvent } from '../../src/providers/provider.js';
import { ScriptedProvider, loadScript } from '../../src/providers/scripted-provider.js';
import type { Content } from '../../src/session/records.js';

const user = (text: string): Content => ({ role: 'user', parts: [{ text }] });
const model = (text: string): Content => ({ role: 'model', parts: [{ text }] });

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

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mend-script-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ScriptedProvider', () => {
  it('picks the response by the number of model entries already in the history', async () => {
    const provider = new ScriptedProvider([{ text: 'first' }, { text: 'second' }, { text: 'third' }]);
    expect(provider.model).toBe('scripted');
    const fresh = await collectResponse(provider.stream({ history: [user('go')], tools: [] }));
    expect(fresh.parts).toEqual([{ text: 'first' }]);
    // A resumed process with two model entries on disk continues with the third response.
    const resumed = await collectResponse(provider.stream({ history: [user('go'), model('first'), user('more'), model('second'), user('again')], tools: [] }));
    expect(resumed.parts).toEqual([{ text: 'third' }]);
  });

  it('chunks text and tool-call arguments and reports tool_use', async () => {
    const provider = new ScriptedProvider([
      {
        thought: 'plan',
        text: 'abcdefghij',
        chunkSize: 4,
        toolCalls: [{ id: 'c1', name: 'read_file', args: { file_path: '/tmp/x' } }],
      },
    ]);
    const events = await drain(provider.stream({ history: [user('go')], tools: [] }));
    expect(events.filter((e) => e.type === 'text_delta')).toEqual([
      { type: 'text_delta', text: 'abcd' },
      { type: 'text_delta', text: 'efgh' },
      { type: 'text_delta', text: 'ij' },
    ]);
    expect(events[0]).toEqual({ type: 'thought_delta', text: 'plan' });
    expect(events.filter((e) => e.type === 'tool_call_delta').length).toBeGreaterThan(1);
    const response = await collectResponse(events);
    expect(response.parts).toEqual([
      { text: 'plan', thought: true },
      { text: 'abcdefghij' },
      { functionCall: { id: 'c1', name: 'read_file', args: { file_path: '/tmp/x' } } },
    ]);
    expect(response.stopReason).toBe('tool_use');
    expect(response.usage.outputTokens).toBeGreaterThan(0);
  });

  it('uses 16-character chunks by default and waits delayMs between chunks', async () => {
    const provider = new ScriptedProvider([{ text: 'x'.repeat(40), delayMs: 30 }]);
    const started = Date.now();
    const events = await drain(provider.stream({ history: [], tools: [] }));
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text.length)).toEqual([16, 16, 8]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('stalls after the first text chunk until the signal aborts', async () => {
    const provider = new ScriptedProvider([{ text: 'hello world, this is long', chunkSize: 5, stallMs: 'forever' }]);
    const controller = new AbortController();
    const seen: ProviderEvent[] = [];
    const run = (async () => {
      for await (const event of provider.stream({ history: [], tools: [], signal: controller.signal })) seen.push(event);
    })();
    setTimeout(() => controller.abort(), 100);
    const error = await failure(run);
    expect(error.code).toBe('aborted');
    expect(seen).toEqual([{ type: 'text_delta', text: 'hello' }]);
  });

  it('stalls for stallMs before tool calls when there is no text', async () => {
    const provider = new ScriptedProvider([{ stallMs: 80, toolCalls: [{ id: 'c', name: 'list_directory', args: { path: '/' } }] }]);
    const started = Date.now();
    const response = await collectResponse(provider.stream({ history: [], tools: [] }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(response.parts).toEqual([{ functionCall: { id: 'c', name: 'list_directory', args: { path: '/' } } }]);
  });

  it('refuses to start when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const provider = new ScriptedProvider([{ text: 'x' }]);
    expect((await failure(drain(provider.stream({ history: [], tools: [], signal: controller.signal })))).code).toBe('aborted');
  });

  it('raises script_exhausted past the end of the script', async () => {
    const provider = new ScriptedProvider([{ text: 'only' }]);
    const error = await failure(drain(provider.stream({ history: [user('a'), model('only'), user('b')], tools: [] })));
    expect(error.code).toBe('script_exhausted');
    expect(error.details).toEqual({ index: 1, length: 1 });
  });

  it('loads and validates a script file, lazily when given a path', async () => {
    const path = join(dir, 'script.json');
    await writeFile(path, JSON.stringify([{ text: 'from file', toolCalls: [{ id: 'c', name: 'edit' }] }]));
    expect(await loadScript(path)).toEqual([{ text: 'from file', toolCalls: [{ id: 'c', name: 'edit', args: {} }] }]);

    const missing = new ScriptedProvider({ path: join(dir, 'nope.json') });
    expect((await failure(drain(missing.stream({ history: [], tools: [] })))).code).toBe('provider_config_missing');

    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify([{ stallMs: 'sometimes' }]));
    expect((await failure(loadScript(bad))).code).toBe('provider_config_missing');
    await writeFile(bad, '[{');
    expect((await failure(loadScript(bad))).code).toBe('provider_config_missing');

    const fromFile = new ScriptedProvider({ path });
    expect((await collectResponse(fromFile.stream({ history: [], tools: [] }))).parts[0]).toEqual({ text: 'from file' });
  });
});
