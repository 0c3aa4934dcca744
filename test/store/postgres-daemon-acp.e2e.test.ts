/**
 * The daemon and the ACP agent on the PostgreSQL store: two daemons on one
 * database stand for two machines; one is killed with SIGKILL mid-tool, the other loads the
 * session as a crash and continues it without re-running the tool. The ACP agent loads the
 * same session from the database with the core's plan.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as acp from '@agentclientprotocol/sdk';
import { buildPlanForSession } from '../../src/recovery/index.js';
import { loadSession } from '../../src/session/session-loader.js';
import { withAcp } from '../support/acp.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { join } from 'node:path';
import { DaemonClient, DaemonSessionClient } from '@qwen-code/sdk/daemon';
import { afterAll, expect, it } from 'vitest';
import { connect, type SDKMessage } from '../../src/sdk/index.js';
import { cleanupSandboxes, killMarkedGroups, makeSandbox, markerLines, mend, slowCommand, waitFor, writeScript } from '../support/cli.js';
import { databasesForFile, describePostgres } from '../support/postgres.js';
import { call, startDaemon, stopAllDaemons } from '../frontends/daemon/helpers.js';

const database = databasesForFile('daemon');
afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

await describePostgres('mend serve on a shared PostgreSQL store', () => {
  it('two daemons on one database: kill one mid-tool, load and continue on the other', { timeout: 90_000 }, async () => {
    const db = await database();
    const sb = makeSandbox('pg-daemon');
    const marker = join(sb.scratch, 'marker.txt');
    const script = writeScript(sb, [
      { text: 'Running the slow step.', toolCalls: [{ id: 'call_slow', name: 'run_shell_command', args: { command: slowCommand(marker) } }] },
      { text: 'Finished on the other daemon.' },
    ]);
    const args = ['--scripted-responses', script, '--approval-mode', 'yolo', '--store', db.url];
    const first = await startDaemon(sb, { args, env: { MEND_HOSTNAME: 'daemon-a', MEND_HOME: join(sb.root, 'home-a') } });
    const second = await startDaemon(sb, { args, env: { MEND_HOSTNAME: 'daemon-b', MEND_HOME: join(sb.root, 'home-b') } });
    const sessionId = randomUUID();
    try {
      expect((await call(first.url, '/session', { body: { sessionId } })).status).toBe(200);
      expect((await call(first.url, `/session/${sessionId}/prompt`, { body: { prompt: [{ type: 'text', text: 'do the slow step' }] } })).status).toBe(202);
      await waitFor(() => markerLines(marker).length === 1, 20_000, 'the tool to start on daemon A');
      // While A lives, B sees a running session held by A.
      const live = await DaemonSessionClient.load(new DaemonClient({ baseUrl: second.url }), sessionId, { workspaceCwd: sb.cwd });
      expect((live.state as { _meta: { mend: { recovery: Record<string, unknown> } } })._meta.mend.recovery).toMatchObject({
        cause: 'running',
        activeWriter: { store: 'postgres', host: 'daemon-a' },
      });
      expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
    } finally {
      killMarkedGroups(marker);
    }

    const q = connect({ url: second.url }).query({ options: { resume: sessionId } });
    const seen: SDKMessage[] = [];
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'system' && m.subtype === 'recovery') {
        expect(m).toMatchObject({ kind: 'interrupted_turn', cause: 'crash' });
        expect(await q.continueLastTurn({ planId: m.plan_id })).toMatchObject({ accepted: true });
      }
      if (m.type === 'result') break;
    }
    expect(seen.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Finished on the other daemon.' });
    expect(markerLines(marker)).toHaveLength(1);
    expect((await second.stop()).exitCode).toBe(0);
  });

  it('mend --acp loads a session from the database with the core plan (imported from JSONL with mend sessions import)', { timeout: 60_000 }, async () => {
    const db = await database();
    const sb = makeSandbox('pg-acp');
    const source = join(CORPUS_DIR, 'dangling-single-call', 'session.jsonl');
    const imported = await mend(sb, ['sessions', 'import', source, '--store', db.url]);
    expect(imported.exitCode, imported.stderr).toBe(0);
    const { sessionId } = JSON.parse(imported.stdout) as { sessionId: string };
    const plan = buildPlanForSession(await loadSession(source));
    const run = await withAcp(sb, { args: ['--store', db.url] }, async (r) => {
      await r.initialize();
      return r.agent.request(acp.methods.agent.session.load, { sessionId, cwd: sb.cwd, mcpServers: [] });
    });
    expect(run.exitCode).toBe(0);
    const recovery = (run.value._meta as { mend: { recovery: Record<string, unknown> } }).mend.recovery;
    expect(recovery).toMatchObject({ recoveryKind: plan.kind, cause: plan.cause, planId: plan.planId });
    // Export gives the records back byte-identical.
    const exported = await mend(sb, ['sessions', 'export', sessionId, '--store', db.url]);
    expect(exported.stdout).toBe(readFileSync(source, 'utf8'));
  });
});
