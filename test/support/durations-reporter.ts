/**
 * After a run, every test file with its duration, slowest first, so a CI log keeps where
 * the time went (vitest's own lines scroll by in file order, or not at all on a
 * terminal). Durations are what vitest measured: importing the file plus its tests and hooks.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class DurationsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules.map((module) => {
      const d = module.diagnostic();
      return { file: module.relativeModuleId, project: module.project.name, ms: d.collectDuration + d.duration, state: module.state() };
    });
    if (rows.length === 0) return;
    rows.sort((a, b) => b.ms - a.ms);
    const total = rows.reduce((sum, row) => sum + row.ms, 0);
    const lines = rows.map(
      (row) => `${(row.ms / 1000).toFixed(1).padStart(7)} s  ${row.project.padEnd(4)}  ${row.file}${row.state === 'passed' ? '' : `  (${row.state})`}`,
    );
    process.stdout.write(`\nTest files by duration (${rows.length} files, ${(total / 1000).toFixed(0)} s in all, across workers):\n${lines.join('\n')}\n`);
  }
}
