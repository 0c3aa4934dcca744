/**
 * The knobs for the outline pass's worker thread (src/cli/outline-env.ts): the machine's
 * CPU count decides by default; MEND_OUTLINE_THREADS=1 or 2 overrides it; the tests share
 * even a tiny log with the bundled worker through MEND_OUTLINE_CHUNK_BYTES.
 */
import { describe, expect, it } from 'vitest';
import { checkpointsFromEnv, MIN_CPUS_FOR_WORKER, outlineFromEnv, outlineScanFromEnv } from '../../src/cli/outline-env.js';

const MANY = MIN_CPUS_FOR_WORKER;
const FEW = MIN_CPUS_FOR_WORKER - 1;

describe('outlineFromEnv', () => {
  it('reads every log on one thread with MEND_OUTLINE_THREADS=1 (it wins over a chunk size)', () => {
    expect(outlineFromEnv({ MEND_OUTLINE_THREADS: '1' }, MANY)).toBe(false);
    expect(outlineFromEnv({ MEND_OUTLINE_THREADS: '1', MEND_OUTLINE_CHUNK_BYTES: '64' }, MANY)).toBe(false);
  });

  it('shares any log with the worker in N-byte chunks, waiting for it, with MEND_OUTLINE_CHUNK_BYTES=N, on any machine', () => {
    for (const cpus of [1, FEW, MANY]) {
      expect(outlineFromEnv({ MEND_OUTLINE_CHUNK_BYTES: '64' }, cpus)).toEqual({
        chunkBytes: 64,
        minBytes: 0,
        maxBytes: Number.POSITIVE_INFINITY,
        startTogether: true,
      });
    }
  });

  it(`uses the worker by default only with ${MIN_CPUS_FOR_WORKER} CPUs or more; MEND_OUTLINE_THREADS=2 uses it on any machine`, () => {
    const others = [
      {},
      { MEND_OUTLINE_CHUNK_BYTES: '0' },
      { MEND_OUTLINE_CHUNK_BYTES: '-5' },
      { MEND_OUTLINE_CHUNK_BYTES: '1.5' },
      { MEND_OUTLINE_CHUNK_BYTES: 'lots' },
    ];
    for (const env of others) {
      expect(outlineFromEnv(env, MANY)).toBeUndefined();
      expect(outlineFromEnv(env, 2 * MANY)).toBeUndefined();
      expect(outlineFromEnv(env, FEW)).toBe(false);
      expect(outlineFromEnv(env, 1)).toBe(false);
    }
    expect(outlineFromEnv({ MEND_OUTLINE_THREADS: '2' }, 1)).toBeUndefined();
    expect(outlineFromEnv({ MEND_OUTLINE_THREADS: '2' }, FEW)).toBeUndefined();
  });
});

describe('outlineScanFromEnv', () => {
  it('turns the line scanner off with MEND_OUTLINE_SCAN=0 only', () => {
    expect(outlineScanFromEnv({ MEND_OUTLINE_SCAN: '0' })).toBe(false);
    for (const value of [undefined, '1', '', 'no']) expect(outlineScanFromEnv({ MEND_OUTLINE_SCAN: value })).toBe(true);
  });
});

describe('checkpointsFromEnv', () => {
  const debug = (): void => undefined;

  it('turns plan checkpoints off with MEND_CHECKPOINTS=0 only, and sends notes to debug with MEND_CHECKPOINTS=debug', () => {
    expect(checkpointsFromEnv({ MEND_CHECKPOINTS: '0' }, debug)).toBeUndefined();
    expect(checkpointsFromEnv({}, debug)).toEqual({});
    expect(checkpointsFromEnv({ MEND_CHECKPOINTS: 'debug' }, debug)).toEqual({ note: debug });
  });

  it('takes the shortest log that gets a checkpoint from MEND_CHECKPOINT_MIN_BYTES, a whole number, and ignores anything else', () => {
    expect(checkpointsFromEnv({ MEND_CHECKPOINT_MIN_BYTES: '0' }, debug)).toEqual({ minBytes: 0 });
    expect(checkpointsFromEnv({ MEND_CHECKPOINT_MIN_BYTES: '4096', MEND_CHECKPOINTS: 'debug' }, debug)).toEqual({ note: debug, minBytes: 4096 });
    for (const value of ['', '-1', '1.5', '1e3', 'many', '99999999999999999999'])
      expect(checkpointsFromEnv({ MEND_CHECKPOINT_MIN_BYTES: value }, debug)).toEqual({});
  });
});
