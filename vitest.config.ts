import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Generous: CI runs on a busy 2-core machine, and a wait for something that does happen costs
  // nothing more when the machine is quick.
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
});
