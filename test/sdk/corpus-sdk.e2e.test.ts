/**
 * The crash corpus through the SDK: `query({options: {resume: <copied path>}})`,
 * take `await q.recovery`, close. The recovery message must agree with the plan the
 * core builds in-process, and resuming without a turn must leave the copy untouched.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../src/recovery/index.js';
import { query } from '../../src/sdk/index.js';
import { loadSession } from '../../src/session/session-loader.js';
import { cleanupSandboxes, makeSandbox, summaryFromCorePlan, summaryFromRecoveryLine } from '../support/cli.js';
import { copyCase, listCorpus, removeCopies } from '../support/corpus.js';

afterAll(cleanupSandboxes);

afterAll(removeCopies);

const cases = listCorpus();

describe.concurrent('crash corpus through the SDK (query + resume)', () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const sb = makeSandbox(`sdk-corpus-${c.name}`);
    const { sessionPath } = copyCase(c);
    const before = readFileSync(sessionPath);

    const loaded = await loadSession(sessionPath);
    const plan = buildPlanForSession(loaded);

    let stderr = '';
    const q = query({ options: { resume: sessionPath, cwd: sb.cwd, env: { MEND_HOME: sb.home, HOME: sb.root }, stderr: (d) => (stderr += d) } });
    if (before.length === 0) {
      // A file with no record, under a name that is no session id, names no session for a
      // host to drive: a session error (exit 3), and the file is never written.
      await expect(q.recovery).rejects.toMatchObject({ code: 'session_read_failed' });
      await q.close();
      expect(readFileSync(sessionPath).equals(before)).toBe(true);
      return;
    }
    let recovery;
    try {
      recovery = await q.recovery;
      expect(q.init?.resumed).toBe(true);
    } finally {
      await q.close();
    }
    expect(stderr).toBe('');
    expect(recovery).not.toBeNull();
    expect(summaryFromRecoveryLine(recovery!)).toEqual(summaryFromCorePlan(plan));
    expect(recovery!.recovered).toBe(plan.kind !== 'clean');
    expect(recovery!.history.api_entries).toBe(plan.apiHistory.length);
    // A host decides later: never continued on its own.
    expect(recovery!.action).toBe(plan.canContinue ? 'awaiting_confirmation' : 'none');
    if (c.expected) expect(recovery!.kind).toBe(c.expected.kind);

    // Nothing ran, so nothing was written, and the lock is gone after close().
    expect(readFileSync(sessionPath).equals(before)).toBe(true);
    expect(readdirSync(dirname(sessionPath))).toEqual(['session.jsonl']);
  });
});
