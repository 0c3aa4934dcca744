/**
 * The daemon load bench's model: an OpenAI-compatible chat-completions server on
 * loopback, in a process of its own (so neither the daemon under test nor the bench's
 * client pays for it), answering any number of sessions at once without a script:
 * each answer follows from the request alone.
 *
 *   a request whose last message is a tool result      -> "Read it."
 *   the last user message asks for turn 0 ("turn 0")   -> a shell tool call `cat marker.txt`
 *   anything else                                      -> "Second turn done."
 *
 * A request without `stream: true` (a helper call some agents make) gets a plain JSON
 * completion. Prints `{"url": "http://127.0.0.1:PORT/v1"}` once listening; counts
 * what it answered on SIGTERM as one more stdout line.
 */
import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { sendSse, startOpenAIServer, textReply, toolCallReply, type ChatMessage, type RecordedRequest, type SseEvent } from '../test/support/openai-server.js';

const counts = { toolCalls: 0, answers: 0, plain: 0 };

function textOf(message: ChatMessage | undefined): string {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
  return '';
}

function reply(request: RecordedRequest, res: ServerResponse): void {
  const messages = Array.isArray(request.body.messages) ? request.body.messages : [];
  const last = messages.at(-1);
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  let events: SseEvent[];
  if (last?.role === 'tool') {
    counts.answers++;
    events = textReply('Read it.').events;
  } else if (/\bturn 0\b/.test(textOf(lastUser))) {
    counts.toolCalls++;
    events = toolCallReply([{ id: `call_${randomUUID().slice(0, 8)}`, name: 'run_shell_command', args: { command: 'cat marker.txt' } }], {
      text: 'Reading the marker.',
    }).events;
  } else {
    counts.answers++;
    events = textReply('Second turn done.').events;
  }
  if (request.body.stream !== true) {
    counts.plain++;
    const text = JSON.stringify({
      id: 'chatcmpl-loopback',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: request.body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: '{}' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  sendSse(res, events);
}

const server = await startOpenAIServer((request, res) => {
  // Nothing here needs the request log (an agent's requests can be large): keep none.
  reply(request, res);
});
// The support server records every request; the bench needs none of them.
setInterval(() => (server.requests.length = 0), 1000).unref();
process.stdout.write(`${JSON.stringify({ url: server.baseURL })}\n`);
process.on('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify(counts)}\n`);
  void server.close().then(() => process.exit(0));
});
