import { defineConfig } from 'vitest/config';

// Two kinds of test file, told apart by name so the split cannot drift:
// - `*.e2e.test.ts` reaches outside the process: the built CLI (`npm run build` first),
//   PostgreSQL, a real peer CLI or tmux.
// - every other `*.test.ts` is a fast in-process test (`npm run test:unit` runs only these).
// The unit project sets MEND_TEST_UNIT=1; the test helpers that start the built CLI or open a
// PostgreSQL database refuse to run under it, so a misnamed file fails instead of slowing the fast run.
export default defineConfig({
  test: {
    // Generous: CI runs on a busy 2-core machine, and a wait for something that does happen costs
    // nothing more when the machine is quick.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    // vitest's own report, then every file's duration, slowest first (kept in the CI log).
    reporters: ['default', './test/support/durations-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/**/*.e2e.test.ts'], env: { MEND_TEST_UNIT: '1' } } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.e2e.test.ts'] } },
    ],
  },
});
