/**
 * A sample of the crash test (scripts/crash-test.ts) on every `npm test`: about 20 kill
 * points of the built CLI (kill-after-write, torn writes, pairs of kills, kill -9 from
 * outside during a tool or the model stream), each checked for durable records, a
 * loadable provider-safe plan of the implied kind, a clean continuation and
 * at-most-once tool execution.
 *
 * MEND_CRASH_POINTS raises the number of points (CI), MEND_CRASH_SEED picks another sample.
 * `npm run crash-test -- --full` runs every systematic point plus random ones (>= 1000).
 */
import { describe, expect, it } from 'vitest';
import { runCrashTest, summaryLine } from '../support/crash-test-core.js';

const POINTS = Number(process.env['MEND_CRASH_POINTS'] ?? '') || 20;
const SEED = Number(process.env['MEND_CRASH_SEED'] ?? '') || 1;

describe('crash test sample', () => {
  it(
    `${POINTS} kill points (seed ${SEED}): no violation`,
    async () => {
      const lines: string[] = [];
      const report = await runCrashTest({ points: POINTS, seed: SEED, log: (l) => lines.push(l) });
      const summary = summaryLine(report);
      expect(report.violations.map((v) => `schedule ${v.schedule} [${v.faults}] run ${v.run} ${v.check}: ${v.message} (${v.sandbox})`)).toEqual([]);
      // A random kill can miss (the run ended first); the systematic ones cannot.
      expect(report.points, summary).toBeGreaterThanOrEqual(Math.floor(POINTS * 0.8));
      expect(report.byFault['kill-after-write'] ?? 0).toBeGreaterThan(0);
      expect(report.byFault['torn-write'] ?? 0).toBeGreaterThan(0);
      expect(summary).toMatch(/^crash-test: \d+ points, 0 violations$/);
    },
    60_000 + POINTS * 8_000,
  );
});
