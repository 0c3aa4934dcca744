/**
 * How the environment and the machine tune a large log's outline pass, for
 * the bench and the tests that drive the bundled worker: MEND_OUTLINE_THREADS=1 reads
 * every log on one thread and MEND_OUTLINE_THREADS=2 shares a log of 16-256 MiB with a
 * worker thread whatever the machine; MEND_OUTLINE_CHUNK_BYTES=N shares any log, however
 * small, with the worker in chunks of N bytes (the main thread waits for it to start).
 * Without them the worker is used only with at least MIN_CPUS_FOR_WORKER CPUs.
 * MEND_OUTLINE_SCAN=0 turns the line scanner off: every line is then parsed as JSON, the
 * reference way (the corpus tests run both ways).
 */
import type { OutlineParallel } from '../session/outline/history-reader.js';

/**
 * With two CPUs a worker thread competes with the main thread's own V8 helpers (garbage
 * collection, compilation) and adds its own heap: measured on four machines of two
 * vCPUs, it made a 100k-record resume 6-8% slower on two, cut the pass by a fifth on one
 * and the resume by 8-16% on another, and made it 37% slower when both threads shared
 * one CPU (docs/performance.md, rounds 5 and 6). With four or more there is a CPU to
 * spare for it.
 */
export const MIN_CPUS_FOR_WORKER = 4;

export function outlineFromEnv(env: Readonly<Record<string, string | undefined>>, cpus: number): OutlineParallel | false | undefined {
  const threads = env['MEND_OUTLINE_THREADS'];
  if (threads === '1') return false;
  const chunk = Number(env['MEND_OUTLINE_CHUNK_BYTES'] ?? '');
  // The worker is waited for, so even a tiny log is shared with it (what the tests drive).
  if (Number.isSafeInteger(chunk) && chunk > 0) return { chunkBytes: chunk, minBytes: 0, maxBytes: Number.POSITIVE_INFINITY, startTogether: true };
  if (threads === '2' || cpus >= MIN_CPUS_FOR_WORKER) return undefined;
  return false;
}

/** Whether the outline pass reads ordinary record lines with the line scanner (MEND_OUTLINE_SCAN=0: no). */
export function outlineScanFromEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  return env['MEND_OUTLINE_SCAN'] !== '0';
}

/**
 * Plan checkpoints (src/runtime/checkpoint): on unless MEND_CHECKPOINTS=0; with
 * MEND_CHECKPOINTS=debug, why a checkpoint was not used goes to `debug`.
 * MEND_CHECKPOINT_MIN_BYTES=N: the shortest log that gets one (a whole number; the default
 * otherwise, DEFAULT_CHECKPOINT_MIN_BYTES), e.g. 0 for the tests that drive small logs.
 */
export function checkpointsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  debug: (line: string) => void,
): { note?: (message: string) => void; minBytes?: number } | undefined {
  const value = env['MEND_CHECKPOINTS'];
  if (value === '0') return undefined;
  const minBytes = /^\d+$/.test(env['MEND_CHECKPOINT_MIN_BYTES'] ?? '') ? Number(env['MEND_CHECKPOINT_MIN_BYTES']) : undefined;
  return { ...(value === 'debug' ? { note: debug } : {}), ...(minBytes !== undefined && Number.isSafeInteger(minBytes) ? { minBytes } : {}) };
}
