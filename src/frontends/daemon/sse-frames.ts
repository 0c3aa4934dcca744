/**
 * Server-sent event frames as text, byte for byte what hono's `writeSSE` writes (its
 * field order: event, data lines, id), so the event stream can send every frame that is
 * ready in one write: a burst of events (a model's deltas arrive several to a read) was a
 * write, a trip through the response's web stream and a socket `writev` each.
 */
export interface SseMessage {
  event?: string;
  data: string;
  id?: string;
}

export function sseFrame(message: SseMessage): string {
  for (const value of [message.event, message.id]) {
    if (value !== undefined && /[\r\n]/.test(value)) throw new Error('an SSE event name or id must not contain "\\r" or "\\n"');
  }
  const data = message.data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n');
  const event = message.event ? `event: ${message.event}\n` : '';
  const id = message.id !== undefined ? `\nid: ${message.id}` : '';
  return `${event}${data}${id}\n\n`;
}
