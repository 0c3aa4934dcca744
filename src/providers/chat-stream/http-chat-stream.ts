/**
 * Chat completions over node's own HTTP client: a kept-alive agent, the request written
 * once, the answer's server-sent events parsed by eventsource-parser and each event's
 * data by JSON.parse. What the `openai` package's client does around that (its oracle,
 * sdk-chat-stream.ts) is done the same way here: retries under its rules
 * (retry-policy.ts), a limit for the headers to arrive, `[DONE]` ending the stream, an
 * event carrying `error` thrown as an APIError, and failures thrown as its own error
 * classes with its messages. The package's error module is loaded only to throw one.
 */
import type * as OpenAIErrorModule from 'openai/error';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ChatStreamResponse, ChatStreamTransport, ChatTransportSettings } from './chat-stream.js';
import { readBodyHead } from '../openai-diagnostics.js';
import { retryDelayMs, shouldRetry } from './retry-policy.js';

type Errors = typeof OpenAIErrorModule;
const loadErrors = (): Promise<Errors> => import('openai/error');

const MAX_ERROR_BODY_BYTES = 1024 * 1024;

/** The header limit ran out before the server answered. */
class HeadersTimeout extends Error {}

export function httpChatStream(settings: ChatTransportSettings): ChatStreamTransport {
  let target: URL | undefined;
  let agent: HttpAgent | undefined;

  const open = async (body: Record<string, unknown>, { signal }: { signal: AbortSignal }): Promise<ChatStreamResponse> => {
    // As the package builds it: the base URL and the path joined as text.
    target ??= new URL(joinURL(settings.baseURL, '/chat/completions'));
    agent ??= target.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    const payload = Buffer.from(JSON.stringify({ ...body, stream: true }));
    const headers: OutgoingHttpHeaders = {
      accept: 'application/json',
      'content-type': 'application/json',
      'content-length': payload.length,
      authorization: `Bearer ${settings.apiKey}`,
      'user-agent': 'mend',
    };
    const { maxRetries } = settings;
    for (let retriesLeft = maxRetries; ; retriesLeft -= 1) {
      if (signal.aborted) throw abortError();
      let res: IncomingMessage;
      try {
        res = await send(target, agent, headers, payload, settings.timeoutMs, signal);
      } catch (error) {
        if (signal.aborted) throw abortError();
        if (retriesLeft > 0) {
          await sleep(retryDelayMs({}, retriesLeft, maxRetries, Date.now()), signal);
          continue;
        }
        const errors = await loadErrors();
        if (error instanceof HeadersTimeout || /timed? ?out/i.test(`${String(error)}${String((error as { cause?: unknown }).cause ?? '')}`)) {
          throw new errors.APIConnectionTimeoutError();
        }
        throw new errors.APIConnectionError({ message: undefined, cause: error as Error });
      }
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) return answer(res, signal);
      const retry = shouldRetry(status, single(res.headers['x-should-retry']));
      if (retry && retriesLeft > 0) {
        res.destroy();
        const delay = retryDelayMs(
          { retryAfterMs: single(res.headers['retry-after-ms']), retryAfter: single(res.headers['retry-after']) },
          retriesLeft,
          maxRetries,
          Date.now(),
        );
        await sleep(delay, signal);
        continue;
      }
      // The package reads an error body whole; a misbehaving server's is cut at 1 MiB here.
      const text = await readBodyHead(decoded(res) as AsyncIterable<Buffer>, MAX_ERROR_BODY_BYTES).then(
        (head) => head.text,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      const json = safeJSON(text);
      const errors = await loadErrors();
      throw errors.APIError.generate(status, json as object | undefined, json ? undefined : text, headersOf(res));
    }
  };
  return { open };
}

function send(target: URL, agent: HttpAgent, headers: OutgoingHttpHeaders, payload: Buffer, timeoutMs: number, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, { method: 'POST', agent, headers });
    const onAbort = (): void => {
      req.destroy(abortError());
    };
    const timer = setTimeout(() => req.destroy(new HeadersTimeout('Request timed out.')), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => {
      clearTimeout(timer);
    };
    req.once('response', (res) => {
      settle();
      // From here the abort ends the response (the provider's consumer sees it as an error).
      res.once('close', () => signal.removeEventListener('abort', onAbort));
      resolve(res);
    });
    req.once('error', (error) => {
      settle();
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    req.end(payload);
  });
}

function answer(res: IncomingMessage, signal: AbortSignal): ChatStreamResponse {
  const body = decoded(res);
  return {
    contentType: single(res.headers['content-type']) ?? '',
    chunks: sseChunks(res, body, signal),
    readBody: (maxBytes) => readBodyHead(body as AsyncIterable<Buffer>, maxBytes),
  };
}

/** The body as sent, decompressed when the server compressed it (mend never asks it to). */
function decoded(res: IncomingMessage): Readable {
  const encoding = single(res.headers['content-encoding'])?.trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  res.on('error', (error) => decoder.destroy(error));
  return res.pipe(decoder);
}

async function* sseChunks(res: IncomingMessage, body: Readable, signal: AbortSignal): AsyncGenerator<unknown> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  let done = false;
  let ended = false;
  body.setEncoding('utf8');
  try {
    for await (const text of body as AsyncIterable<string>) {
      parser.feed(text);
      for (const event of events.splice(0)) {
        // Whatever follows `[DONE]` is read (the connection stays reusable) but not yielded.
        if (done) continue;
        if (event.data.startsWith('[DONE]')) {
          done = true;
          continue;
        }
        const data: unknown = JSON.parse(event.data);
        if (event.event !== undefined && event.event.startsWith('thread.')) {
          yield { event: event.event, data };
          continue;
        }
        const error = (data as { error?: unknown } | null)?.error;
        if (error) {
          const errors = await loadErrors();
          throw new errors.APIError(undefined, error as object, undefined, headersOf(res));
        }
        yield data;
      }
    }
    ended = true;
  } finally {
    // A consumer that stopped early, or a failure: the rest of the response is not wanted,
    // and its connection must not be reused mid-answer.
    if (!ended || signal.aborted) res.destroy();
  }
}

function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  return headers;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function safeJSON(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function joinURL(base: string, path: string): string {
  return base.endsWith('/') ? base + path.slice(1) : base + path;
}

function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
