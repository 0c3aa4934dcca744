/**
 * When a failed chat-completions request is tried again, and after how long: the rules of
 * the `openai` package's client (v6), so that both transports retry alike. A server's
 * `x-should-retry` is obeyed; otherwise 408, 409, 429 and 5xx are retried. The wait is the
 * server's `retry-after-ms` or `retry-after` (seconds or a date), else 0.5 s doubling per
 * retry up to 8 s, less up to a quarter of jitter.
 */

export function shouldRetry(status: number, shouldRetryHeader: string | undefined): boolean {
  if (shouldRetryHeader === 'true') return true;
  if (shouldRetryHeader === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** `retriesLeft` counts this retry among those left (maxRetries on the first). */
export function defaultRetryDelayMs(retriesLeft: number, maxRetries: number, random: () => number = Math.random): number {
  const seconds = Math.min(0.5 * 2 ** (maxRetries - retriesLeft), 8);
  return seconds * (1 - random() * 0.25) * 1000;
}

export function retryDelayMs(
  headers: { retryAfterMs?: string | undefined; retryAfter?: string | undefined },
  retriesLeft: number,
  maxRetries: number,
  now: number,
): number {
  let delay: number | undefined;
  if (headers.retryAfterMs) {
    const ms = parseFloat(headers.retryAfterMs);
    if (!Number.isNaN(ms)) delay = ms;
  }
  if (headers.retryAfter && !delay) {
    const seconds = parseFloat(headers.retryAfter);
    delay = Number.isNaN(seconds) ? Date.parse(headers.retryAfter) - now : seconds * 1000;
  }
  if (delay === undefined) return defaultRetryDelayMs(retriesLeft, maxRetries);
  // A date in the past or one that does not parse: go again at once, as the package does.
  return Number.isNaN(delay) ? 0 : Math.max(0, delay);
}
