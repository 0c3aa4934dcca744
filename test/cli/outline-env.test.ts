/**
 * The environment's knobs for the outline pass's worker thread (src/cli/outline-env.ts):
 * the bench reads on one thread with MEND_OUTLINE_THREADS=1; the tests share even a tiny
 * log with the bundled worker through MEND_OUTLINE_CHUNK_BYTES; anything else is the default.
 */
import { describe, expect, it } from 'vitest';
import { outlineFromEnv } from '../../src/cli/outline-env.js';

describe('outlineFromEnv', () => {
  it('reads every log on one thread with MEND_OUTLINE_THREADS=1 (it wins over a chunk size)', () => {
    expect(outlineFromEnv({ MEND_OUTLINE_THREADS: '1' })).toBe(false);
    expect(outlineFromEnv({ MEND_OUTLINE_THREADS: '1', MEND_OUTLINE_CHUNK_BYTES: '64' })).toBe(false);
  });

  it('shares any log with the worker in N-byte chunks, waiting for it, with MEND_OUTLINE_CHUNK_BYTES=N', () => {
    expect(outlineFromEnv({ MEND_OUTLINE_CHUNK_BYTES: '64' })).toEqual({
      chunkBytes: 64,
      minBytes: 0,
      maxBytes: Number.POSITIVE_INFINITY,
      startTogether: true,
    });
  });

  it('leaves the default for anything else', () => {
    for (const env of [
      {},
      { MEND_OUTLINE_THREADS: '2' },
      { MEND_OUTLINE_CHUNK_BYTES: '0' },
      { MEND_OUTLINE_CHUNK_BYTES: '-5' },
      { MEND_OUTLINE_CHUNK_BYTES: '1.5' },
      { MEND_OUTLINE_CHUNK_BYTES: 'lots' },
    ]) {
      expect(outlineFromEnv(env)).toBeUndefined();
    }
  });
});
