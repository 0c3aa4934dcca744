/**
 * The crash corpus through the built CLI: `mend --resume <copied path> -o stream-json`
 * with no prompt only inspects. It must take no lock and write nothing, and its
 * recovery line must agree with the plan the core builds in-process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../src/recovery/index.js';
import { loadSession } from '../../src/session/session-loader.js';
import { copyCase, listCorpus } from '../support/corpus.js';
import { cleanupSandboxes, makeSandbox, trackTempDir, mend, snapshotTree, summaryFromCorePlan, summaryFromRecoveryLine, transcript } from '../support/cli.js';

const cases = listCorpus();

afterAll(cleanupSandboxes);

describe.concurrent('crash corpus through `mend --resume <path> -o stream-json` (inspect only)', { timeout: 60_000 }, () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const sb = makeSandbox(`corpus-${c.name}`);
    const { dir, sessionPath } = copyCase(c);
    trackTempDir(dir);
    const before = readFileSync(sessionPath);

    // The core plan, computed in-process from the same copy (as in corpus-core.test.ts).
    const loaded = await loadSession(sessionPath);
    const plan = buildPlanForSession(loaded);

    const run = await mend(sb, ['--resume', sessionPath, '-o', 'stream-json']);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const t = transcript(run.stdout);
    expect(t.kinds).toEqual(['system:init', 'system:recovery', 'result']);
    expect(t.init.resumed).toBe(true);
    expect(t.result).toMatchObject({ subtype: 'success', is_error: false, num_turns: 0 });

    const line = t.recovery!;
    expect(summaryFromRecoveryLine(line)).toEqual(summaryFromCorePlan(plan));
    expect(line.recovered).toBe(plan.kind !== 'clean');
    expect(line.history.records).toBe(loaded.conversation.totalRecords);
    expect(line.history.api_entries).toBe(plan.apiHistory.length);
    // Inspecting never continues: it waits for confirmation when there is something to continue.
    expect(line.action).toBe(plan.canContinue ? 'awaiting_confirmation' : 'none');
    if (c.expected) expect(line.kind).toBe(c.expected.kind);

    // The same line when the outline pass shares the log with the bundled worker thread, in 64-byte chunks.
    const shared = await mend(sb, ['--resume', sessionPath, '-o', 'stream-json'], { env: { MEND_OUTLINE_CHUNK_BYTES: '64' } });
    expect(shared.stderr).toBe('');
    const sharedLine = transcript(shared.stdout).recovery!;
    expect(summaryFromRecoveryLine(sharedLine)).toEqual(summaryFromRecoveryLine(line));
    expect(sharedLine.history).toEqual(line.history);

    // The same line with the outline pass's line scanner off (every line parsed, the reference way).
    const parsed = await mend(sb, ['--resume', sessionPath, '-o', 'stream-json'], { env: { MEND_OUTLINE_SCAN: '0' } });
    expect(parsed.stderr).toBe('');
    expect(transcript(parsed.stdout).recovery).toEqual({ ...line, uuid: transcript(parsed.stdout).recovery!.uuid });

    // No lock, no writes: the copy is byte-identical, its folder holds only it, and MEND_HOME has no files.
    expect(readFileSync(sessionPath).equals(before)).toBe(true);
    expect(readdirSync(dirname(sessionPath))).toEqual(['session.jsonl']);
    expect(Object.entries(snapshotTree(sb.home)).filter(([, v]) => v !== 'dir')).toEqual([]);
  });
});
