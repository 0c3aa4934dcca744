/**
 * The foreign corpus through the built `mend serve`: every case placed where its agent
 * keeps this project's sessions; the workspace session list shows each with its agent,
 * kind, cause and plan id, and loading each by the owner's own session id (Qwen's
 * DaemonClient) answers with the same plan. Nothing is written anywhere.
 */
import { DaemonClient } from '@qwen-code/sdk/daemon';
import { afterAll, describe, expect, it } from 'vitest';
import { RecoverySummaryCamelSchema } from '../../../src/wire/recovery-summary.js';
import { cleanupSandboxes, makeSandbox, snapshotTree } from '../../support/cli.js';
import { foreignHomeEnv, listForeignCorpus, placeInHome } from '../../support/foreign-corpus.js';
import { call, startDaemon, stopAllDaemons } from './helpers.js';

const cases = listForeignCorpus(true);

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

describe('foreign corpus through mend serve (workspace list, load by the owner’s id)', () => {
  it('lists and loads every case with its plan, writing nothing', { timeout: 120_000 }, async () => {
    const sb = makeSandbox('daemon-foreign');
    const placed = cases.map((c) => ({ c, path: placeInHome(sb, c.name) }));
    const before = snapshotTree(sb.root);
    const daemon = await startDaemon(sb, { env: foreignHomeEnv(sb) });

    const listed = await call<{ sessions: Array<Record<string, unknown>> }>(daemon.url, `/workspace/${encodeURIComponent(sb.cwd)}/sessions?size=1000`);
    const qwen = new DaemonClient({ baseUrl: daemon.url });
    for (const { c, path } of placed) {
      const e = c.expected;
      const row = listed.body.sessions.find((s) => s['path'] === path);
      expect(row, c.name).toMatchObject({ agent: e.agent, recoveryKind: e.kind, cause: e.cause, planId: e.planId });
      const id = row!['sessionId'] as string;
      const raw = (await qwen.loadSession(id, { workspaceCwd: sb.cwd })) as unknown as Record<string, unknown>;
      const meta = RecoverySummaryCamelSchema.parse((raw['state'] as { _meta: { mend: { recovery: unknown } } })._meta.mend.recovery);
      expect({ planId: meta.planId, kind: meta.kind, cause: meta.cause, agent: meta.agent }, c.name).toEqual({
        planId: e.planId,
        kind: e.kind,
        cause: e.cause,
        agent: e.agent,
      });
      await call(daemon.url, `/session/${id}`, { method: 'DELETE' });
    }
    await daemon.stop();
    expect(daemon.stderr()).not.toMatch(/error|MaxListeners|unhandled/i);
    expect(snapshotTree(sb.root)).toEqual(before);
  });
});
