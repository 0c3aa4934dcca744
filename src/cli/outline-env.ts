/**
 * How the environment tunes a large log's outline pass (issue 11), for the bench and
 * the tests that drive the bundled worker: MEND_OUTLINE_THREADS=1 reads every log on
 * one thread; MEND_OUTLINE_CHUNK_BYTES=N shares any log, however small, with the worker
 * in chunks of N bytes (the main thread waits for it to start). Anything else leaves
 * the default (a worker for logs of 16-256 MiB).
 */
import type { OutlineParallel } from '../session/outline-reader.js';

export function outlineFromEnv(env: Readonly<Record<string, string | undefined>>): OutlineParallel | false | undefined {
  if (env['MEND_OUTLINE_THREADS'] === '1') return false;
  const chunk = Number(env['MEND_OUTLINE_CHUNK_BYTES'] ?? '');
  // The worker is waited for, so even a tiny log is shared with it (what the tests drive).
  if (Number.isSafeInteger(chunk) && chunk > 0) return { chunkBytes: chunk, minBytes: 0, maxBytes: Number.POSITIVE_INFINITY, startTogether: true };
  return undefined;
}
