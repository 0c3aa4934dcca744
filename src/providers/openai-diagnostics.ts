/**
 * Helpers that let provider errors say what happened and where: which server (its base
 * URL, stripped of anything that can hold a credential), and the network cause hidden
 * under the library's generic "Connection error." or undici's "terminated".
 */

/** The base URL without user info, query or fragment: those can carry keys. */
export function displayURL(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(invalid base URL)';
  }
}

const CODE_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'the server closed the connection',
};

/**
 * The innermost useful cause: fetch wraps the socket error in "fetch failed", and the
 * library wraps that in "Connection error.". Returns e.g. "connection refused (ECONNREFUSED)".
 */
export function networkCause(error: unknown): string | undefined {
  let current: unknown = error;
  let found: string | undefined;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth += 1) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) found = CODE_TEXT[code] ? `${CODE_TEXT[code]} (${code})` : code;
    else if (found === undefined && typeof message === 'string' && depth > 0 && message !== 'fetch failed') found = message;
    current = (current as { cause?: unknown }).cause;
  }
  return found;
}

/**
 * Reads at most `maxBytes` of a body (a fetch Response's web stream or a node stream):
 * a misbehaving server must not fill memory. Leaving the loop early cancels the rest.
 */
export async function readBodyHead(body: AsyncIterable<Uint8Array> | null | undefined, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!body) return { text: '', truncated: false };
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  for await (const value of body) {
    chunks.push(value);
    total += value.length;
    if (total > maxBytes) {
      truncated = true;
      break;
    }
  }
  const text = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
  return { text, truncated };
}

/**
 * Some servers ignore `stream: true` and answer with one JSON chat.completion. As a single
 * stream chunk (message as delta, tool calls indexed) it goes through the same mapper.
 */
export function completionAsChunk(json: unknown): Record<string, unknown> | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  const { choices, usage } = json as { choices?: unknown; usage?: unknown };
  if (!Array.isArray(choices)) return undefined;
  const first = choices.find((choice: { index?: unknown }) => (choice?.index ?? 0) === 0) as
    { message?: Record<string, unknown>; finish_reason?: unknown } | undefined;
  const message = first?.message;
  if (!message || typeof message !== 'object') return undefined;
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as Array<Record<string, unknown>>) : [];
  return {
    choices: [
      {
        index: 0,
        delta: { ...message, tool_calls: toolCalls.map((call, index) => ({ ...call, index })) },
        finish_reason: first?.finish_reason ?? null,
      },
    ],
    ...(usage === undefined ? {} : { usage }),
  };
}
