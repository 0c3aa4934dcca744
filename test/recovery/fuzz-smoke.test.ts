/**
 * A small slice of `npm run fuzz`, in-process, so CI exercises the fuzz core:
 * 2000 generated cases (corpus mutations, generated logs, wrong-typed fields,
 * stream-json input, a huge line, deeply nested values) with a fixed seed.
 * MEND_FUZZ_SEED picks another seed. A failure names the case to replay with
 * `npm run fuzz -- --case <caseSeed> --index <index>`.
 */
import { afterAll, expect, it } from 'vitest';
import { createContext, disposeContext, runBatch } from '../support/fuzz-worker.js';

const CASES = 2000;
const seed = Number(process.env.MEND_FUZZ_SEED ?? 0x5eed) >>> 0;
const ctx = createContext();
afterAll(() => disposeContext(ctx));

it(`fuzz core: ${CASES} cases (seed ${seed}) without a throw or a broken invariant`, async () => {
  const result = await runBatch(ctx, seed, CASES);
  expect(result.cases).toBe(CASES);
  expect(result.failures.map((f) => `[${f.family}] --case ${f.caseSeed} --index ${f.index}: ${f.problems.join(' | ').slice(0, 300)}`)).toEqual([]);
}, 240_000);
