/**
 * The fast unit run (vitest's `unit` project, MEND_TEST_UNIT=1) is in-process only. Every
 * helper that reaches outside (the built CLI, PostgreSQL, a real peer CLI) calls this first,
 * so a test file that needs one and is not named `*.e2e.test.ts` fails at once in that run
 * instead of making it slow (or dependent on a build).
 */
export function outsideTheProcess(what: string): void {
  if (process.env['MEND_TEST_UNIT'] === '1') {
    throw new Error(`this test uses ${what}: name its file *.e2e.test.ts (the unit run is in-process only; see vitest.config.ts)`);
  }
}
