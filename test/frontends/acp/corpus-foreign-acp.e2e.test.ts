/**
 * The foreign corpus through `mend --acp`: `session/list` shows this project's sessions
 * in the other agents' homes with `_meta.mend.agent`, and `session/load` of each case's
 * file (by its path) answers with the plan of expected.json (agent, kind, cause, plan
 * id). One agent process loads every case; nothing is written anywhere.
 */
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { RecoverySummaryCamelSchema } from '../../../src/wire/recovery-summary.js';
import { withAcp } from '../../support/acp.js';
import { cleanupSandboxes, makeSandbox, snapshotTree, trackTempDir } from '../../support/cli.js';
import { copyForeignCase, foreignHomeEnv, listForeignCorpus, placeInHome, removeForeignCopies } from '../../support/foreign-corpus.js';

const cases = listForeignCorpus(true);

afterAll(() => {
  cleanupSandboxes();
  removeForeignCopies();
});

describe('foreign corpus through `mend --acp` (session/list, session/load)', () => {
  it('lists and loads every case with its plan, writing nothing', { timeout: 120_000 }, async () => {
    const sb = makeSandbox('acp-foreign');
    const placed = ['claude-killed-mid-tool', 'codex-turn-aborted', 'gemini-killed-tool-call'].map((name) => ({ name, path: placeInHome(sb, name) }));
    const copies = cases.map((c) => {
      const { dir, sessionPath } = copyForeignCase(c);
      trackTempDir(dir);
      return { c, dir, sessionPath, before: snapshotTree(dir) };
    });
    const before = snapshotTree(sb.root);

    const run = await withAcp(sb, { env: foreignHomeEnv(sb) }, async (r) => {
      await r.initialize({ session: { notices: {} } });
      const list = await r.agent.request(acp.methods.agent.session.list, { cwd: sb.cwd });
      const loads: Array<{ name: string; meta: unknown }> = [];
      for (const { c, sessionPath } of copies) {
        const answer = await r.agent.request(acp.methods.agent.session.load, { sessionId: sessionPath, cwd: sb.cwd, mcpServers: [] });
        loads.push({ name: c.name, meta: (answer._meta as { mend: { recovery: unknown } }).mend.recovery });
        await r.agent.request(acp.methods.agent.session.close, { sessionId: sessionPath });
      }
      // A listed session loads by the id the list gave.
      const listed = await r.agent.request(acp.methods.agent.session.load, { sessionId: placed[0]!.path, cwd: sb.cwd, mcpServers: [] });
      return { list, loads, listed };
    });
    expect(run.stderr).toBe('');
    const { list, loads, listed } = run.value;

    for (const { name, path } of placed) {
      const c = cases.find((x) => x.name === name)!;
      const info = list.sessions.find((s) => s.sessionId === path);
      expect(info, name).toBeDefined();
      expect((info!._meta as { mend: Record<string, unknown> }).mend, name).toMatchObject({
        agent: c.expected.agent,
        kind: c.expected.kind,
        cause: c.expected.cause,
      });
    }
    for (const { name, meta } of loads) {
      const e = cases.find((x) => x.name === name)!.expected;
      const summary = RecoverySummaryCamelSchema.parse(meta);
      expect({ planId: summary.planId, kind: summary.kind, cause: summary.cause, agent: summary.agent }, name).toEqual({
        planId: e.planId,
        kind: e.kind,
        cause: e.cause,
        agent: e.agent,
      });
    }
    expect(RecoverySummaryCamelSchema.parse((listed._meta as { mend: { recovery: unknown } }).mend.recovery)).toMatchObject({
      planId: cases.find((x) => x.name === 'claude-killed-mid-tool')!.expected.planId,
      agent: 'claude',
    });

    for (const { c, dir, before: files } of copies) expect(snapshotTree(dir), c.name).toEqual(files);
    expect(snapshotTree(sb.root)).toEqual(before);
  });
});
