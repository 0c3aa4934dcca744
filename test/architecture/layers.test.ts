/**
 * The layering and cycle rules of .dependency-cruiser.cjs, run with the real
 * dependency-cruiser (parser: @swc/core; TypeScript 7 has no compiler API). The
 * check must have cruised modules (an empty cruise would pass vacuously), and it
 * must fail on a deliberately added cycle.
 */
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

interface CruiseSummary {
  violations: Array<{ rule: { name: string }; from: string; to: string }>;
  totalCruised: number;
}

async function cruise(cwd: string): Promise<CruiseSummary> {
  const r = await execa(BIN, ['src', '--config', CONFIG, '--output-type', 'json'], { cwd, reject: false });
  expect(r.stderr).toBe('');
  return (JSON.parse(r.stdout) as { summary: CruiseSummary }).summary;
}

describe('architecture rules (dependency-cruiser)', { timeout: 60_000 }, () => {
  it('src/ has no cycles and keeps its layers', async () => {
    const summary = await cruise(ROOT);
    expect(summary.totalCruised).toBeGreaterThan(50);
    expect(summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  it('fails on a deliberately added cycle', async () => {
    const summary = await cruise(join(ROOT, 'test/architecture/fixtures/cycle'));
    expect(summary.totalCruised).toBe(2);
    expect(summary.violations.map((v) => v.rule.name)).toContain('no-cycles');
    expect(summary.violations.map((v) => v.rule.name)).toContain('runtime-stays-inside');
  });

  it('keeps the outline wing behind its interface and the planner off I/O modules and the wing', async () => {
    const summary = await cruise(join(ROOT, 'test/architecture/fixtures/wing'));
    expect(summary.totalCruised).toBe(6);
    expect(summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort()).toEqual([
      'outline-wing-behind-its-interface: src/runtime/reaches-in.ts -> src/session/outline/outline-pass.ts',
      'recovery-is-pure: src/recovery/impure.ts -> src/session/log-reader.ts',
      'recovery-is-pure: src/recovery/impure.ts -> src/session/outline/history-reader.ts',
    ]);
  });
});
