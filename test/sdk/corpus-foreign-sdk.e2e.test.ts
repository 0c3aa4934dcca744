/**
 * The foreign corpus through the SDK: `query({options: {resume: PATH}})` on another
 * agent's session file. The recovery message and the control protocol's
 * `get_recovery_plan` give each case's agent, kind, cause and plan id, and nothing is
 * written (the file, its folder, the sandbox).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { query } from '../../src/sdk/index.js';
import { cleanupSandboxes, makeSandbox, snapshotTree, trackTempDir } from '../support/cli.js';
import { copyForeignCase, listForeignCorpus, removeForeignCopies } from '../support/foreign-corpus.js';

afterAll(() => {
  cleanupSandboxes();
  removeForeignCopies();
});

const cases = listForeignCorpus(true);

describe.concurrent('foreign corpus through the SDK (query + resume: PATH, get_recovery_plan)', { timeout: 60_000 }, () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const sb = makeSandbox(`sdk-foreign-${c.name}`);
    const { dir, sessionPath } = copyForeignCase(c);
    trackTempDir(dir);
    const before = { sandbox: snapshotTree(sb.root), source: snapshotTree(dir) };
    const e = c.expected;

    let stderr = '';
    const q = query({ options: { resume: sessionPath, cwd: sb.cwd, env: { MEND_HOME: sb.home, HOME: sb.root }, stderr: (d) => (stderr += d) } });
    let recovery;
    let plan;
    try {
      recovery = await q.recovery;
      plan = await q.getRecoveryPlan();
    } finally {
      await q.close();
    }
    expect(stderr).toBe('');
    expect(recovery).toMatchObject({ plan_id: e.planId, kind: e.kind, cause: e.cause, agent: e.agent, agent_version: e.agentVersion });
    expect(recovery!.action).toBe(e.canContinue ? 'awaiting_confirmation' : 'none');
    expect(plan).toMatchObject({ plan_id: e.planId, kind: e.kind, cause: e.cause, agent: e.agent });

    expect(snapshotTree(dir)).toEqual(before.source);
    expect(snapshotTree(sb.root)).toEqual(before.sandbox);
  });
});
