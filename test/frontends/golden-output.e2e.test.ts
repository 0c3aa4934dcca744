/**
 * Behaviour record: the stream-json output of every corpus case (inspect, continue,
 * control protocol), normalized, equals fixtures/golden/stream-json.json. Recorded on
 * main before the runtime refactor; a change to it is a deliberate, reviewed diff
 * (MEND_UPDATE_GOLDEN=1 npx vitest run test/frontends/golden-output.e2e.test.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, makeSandbox } from '../support/cli.js';
import { listCorpus } from '../support/corpus.js';
import { GOLDEN_FILE, goldenRuns, type GoldenRuns } from '../support/golden.js';

afterAll(cleanupSandboxes);

const cases = listCorpus();
const update = process.env['MEND_UPDATE_GOLDEN'] === '1';
const recorded: Record<string, GoldenRuns> = existsSync(GOLDEN_FILE) ? (JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as Record<string, GoldenRuns>) : {};
const fresh: Record<string, GoldenRuns> = {};

describe.concurrent('golden stream-json output of the crash corpus', { timeout: 120_000 }, () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (name, c) => {
    const runs = await goldenRuns(c, () => makeSandbox(`golden-${name}`));
    fresh[name] = runs;
    if (!update) expect(runs).toEqual(recorded[name]);
  });
});

afterAll(() => {
  if (!update) return;
  const sorted = Object.fromEntries(
    Object.keys(fresh)
      .sort()
      .map((k) => [k, fresh[k]]),
  );
  writeFileSync(GOLDEN_FILE, `${JSON.stringify(sorted, null, 1)}\n`);
});
