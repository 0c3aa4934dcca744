/**
 * The daemon's SSE frames (src/frontends/daemon/sse-frames.ts) against their oracle, hono's
 * own writeSSE: the same bytes for any event name, id and data, newlines of every kind included.
 */
import fc from 'fast-check';
import { SSEStreamingApi } from 'hono/streaming';
import { describe, expect, it } from 'vitest';
import { sseFrame, type SseMessage } from '../../../src/frontends/daemon/sse-frames.js';

/** What hono's writeSSE writes for one message. */
async function honoFrame(message: SseMessage): Promise<string> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const stream = new SSEStreamingApi(writable, readable);
  const reader = stream.responseReadable.getReader();
  const written = stream.writeSSE(message);
  const chunk = await reader.read();
  await written;
  return new TextDecoder().decode(chunk.value);
}

const line = fc.string({ unit: fc.constantFrom('a', 'é', ' ', ':', '{', '"', '\u2028'), maxLength: 6 });
const data = fc
  .array(fc.tuple(line, fc.constantFrom('\n', '\r', '\r\n')), { maxLength: 4 })
  .chain((parts) => line.map((last) => parts.map(([l, nl]) => l + nl).join('') + last));
const message: fc.Arbitrary<SseMessage> = fc.record(
  { event: fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z_]{1,12}$/)), id: fc.oneof(fc.constant(''), fc.nat().map(String)), data },
  { requiredKeys: ['data'] },
);

describe('sseFrame', () => {
  it("writes what hono's writeSSE writes", async () => {
    await fc.assert(
      fc.asyncProperty(message, async (m) => {
        expect(sseFrame(m)).toBe(await honoFrame(m));
      }),
    );
    expect(sseFrame({ event: 'session_update', id: '7', data: '{"a":1}' })).toBe('event: session_update\ndata: {"a":1}\nid: 7\n\n');
  });

  it('refuses an event name or id with a line break, as hono does', () => {
    expect(() => sseFrame({ event: 'a\nb', data: '' })).toThrow(/must not contain/);
    expect(() => sseFrame({ id: '1\r', data: '' })).toThrow(/must not contain/);
  });
});
