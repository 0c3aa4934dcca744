/**
 * `npm run crash-test [-- --points N | --full] [--seed S] [--jobs J] [--keep]`
 *
 * Kills real runs of the built CLI at every write point and at random moments, then
 * checks the log, the recovery plan, the continuation and tool execution counts
 * (see test/support/crash-test-core.ts). Prints `crash-test: N points, V violations` and
 * exits 1 on any violation.
 */
import { describeSchedule, planSchedules, runCrashTest, summaryLine, KIND_TABLE } from '../test/support/crash-test-core.js';

function usage(): never {
  process.stderr.write(
    'usage: crash-test [--points N] [--full] [--seed S] [--jobs J] [--keep] [--list]\n' +
      '  --points N  kill points to try (default 150)\n' +
      '  --full      every systematic kill point plus random ones, at least 1000 points\n' +
      '  --seed S    seed for the random kill points and samples (default 1)\n' +
      '  --jobs J    schedules run in parallel (default: twice the cores)\n' +
      '  --keep      keep every sandbox (failing ones are always kept)\n' +
      '  --list      print the schedules and the kind table, run nothing\n',
  );
  process.exit(2);
}

function intArg(argv: string[], i: number): number {
  const v = Number(argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) usage();
  return v;
}

async function main(argv: string[]): Promise<number> {
  let points: number | undefined;
  let full = false;
  let seed = 1;
  let jobs: number | undefined;
  let keep = false;
  let list = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--points') points = intArg(argv, i++);
    else if (a === '--full') full = true;
    else if (a === '--seed') seed = intArg(argv, i++);
    else if (a === '--jobs') jobs = intArg(argv, i++);
    else if (a === '--keep') keep = true;
    else if (a === '--list') list = true;
    else usage();
  }
  points ??= Number(process.env['MEND_CRASH_POINTS'] ?? '') || 150;

  if (list) {
    for (const row of KIND_TABLE) process.stdout.write(`kind table: ${row.when.padEnd(60)} -> ${row.kind}\n`);
    for (const s of planSchedules({ points, full, seed }))
      process.stdout.write(`${String(s.id).padStart(5)}  ${s.category.padEnd(40)} ${describeSchedule(s)}\n`);
    return 0;
  }

  const report = await runCrashTest({
    points,
    full,
    seed,
    ...(jobs !== undefined ? { jobs } : {}),
    keepAll: keep,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stderr.write(
    `crash-test: seed ${report.seed}, ${report.schedules} schedules, ${report.runs} runs, ${report.notFired} faults did not fire, ` +
      `${report.jobs} jobs, ${(report.durationMs / 1000).toFixed(1)} s\n` +
      `crash-test: kill points by fault: ${JSON.stringify(report.byFault)}; by implied kind: ${JSON.stringify(report.byKind)}\n`,
  );
  process.stdout.write(`${summaryLine(report)}\n`);
  return report.violations.length === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
