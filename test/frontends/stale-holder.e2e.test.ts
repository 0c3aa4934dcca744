/**
 * A holder that is gone is noticed on the next request, in every front end: a real
 * `mend` process holds a crashed session's lease (stream-json input left open), the
 * front end opens the session read-only (cause `running`, the holder named), the
 * holder is killed with SIGKILL (its lock file stays, naming a dead pid), and the
 * very next request sees a crash to recover: the summary drops the holder and a
 * continue is accepted. The daemon and ACP are the built CLI; the terminal UI runs
 * in process (ink-testing-library) on the same home.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { RecoverySummaryCamelSchema } from '../../src/wire/recovery-summary.js';
import { withAcp } from '../support/acp.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { cleanupSandboxes, logPathOf, makeSandbox, spawnMend, watchStdout, writeScript, type Sandbox } from '../support/cli.js';
import { call, startDaemon, stopAllDaemons } from './daemon/helpers.js';
import { renderTui } from './tui/tui-harness.js';

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

const SESSION = '38dff1b0-3406-4c0b-a5f4-8df5d96853fc';

function installDangling(sb: Sandbox): string {
  mkdirSync(sb.chats, { recursive: true });
  const path = logPathOf(sb, SESSION);
  copyFileSync(join(CORPUS_DIR, 'dangling-single-call', 'session.jsonl'), path);
  return path;
}

/** A real process holding the session's lease until killed; resolves with its pid once it holds it. */
async function holdWithProcess(sb: Sandbox): Promise<{ pid: number; kill: () => Promise<void> }> {
  const holder = spawnMend(sb, ['--resume', SESSION, '--input-format', 'stream-json', '-o', 'stream-json'], { stdin: 'pipe', timeout: 60_000 });
  await watchStdout(holder).waitFor((line) => line.includes('"subtype":"recovery"'));
  return {
    pid: holder.pid!,
    kill: async () => {
      holder.kill('SIGKILL');
      await holder;
    },
  };
}

const script = (sb: Sandbox) => writeScript(sb, [{}, {}, { text: 'Checked after the holder died.' }]);

describe('a holder that died is noticed on the next request', { timeout: 120_000 }, () => {
  it('daemon: 409 session_locked naming the live holder; after SIGKILL the next recovery says crash and continue is accepted', async () => {
    const sb = makeSandbox('stale-daemon');
    installDangling(sb);
    const holder = await holdWithProcess(sb);
    const daemon = await startDaemon(sb, { args: ['--scripted-responses', script(sb)] });
    const loaded = await call<{ recovery: Record<string, unknown> }>(daemon.url, `/session/${SESSION}/load`, { body: { cwd: sb.cwd } });
    expect(loaded.status).toBe(200);
    expect(loaded.body.recovery).toMatchObject({ cause: 'running', activeWriter: { pid: holder.pid } });
    const refused = await call(daemon.url, `/session/${SESSION}/continue`, { body: {} });
    expect(refused.body).toMatchObject({ accepted: false, code: 'session_locked' });
    const prompt = await call(daemon.url, `/session/${SESSION}/prompt`, { body: { prompt: [{ type: 'text', text: 'hi' }] } });
    expect(prompt.status).toBe(409);
    expect(JSON.stringify(prompt.body)).toContain(String(holder.pid));

    await holder.kill();
    const recovery = await call<Record<string, unknown>>(daemon.url, `/session/${SESSION}/recovery`);
    const summary = RecoverySummaryCamelSchema.parse(recovery.body);
    expect(summary).toMatchObject({ kind: 'interrupted_turn', cause: 'crash', activeWriter: null, canContinue: true });
    const accepted = await call(daemon.url, `/session/${SESSION}/continue`, { body: { planId: summary.planId } });
    expect(accepted.body).toMatchObject({ accepted: true, kind: 'interrupted_turn' });
  });

  it('ACP: _mend/session/recovery drops the dead holder; the continue then runs', async () => {
    const sb = makeSandbox('stale-acp');
    installDangling(sb);
    const holder = await holdWithProcess(sb);
    const run = await withAcp(sb, { args: ['--scripted-responses', script(sb)] }, async (r) => {
      await r.initialize();
      const answer = await r.agent.request(acp.methods.agent.session.load, { sessionId: SESSION, cwd: sb.cwd, mcpServers: [] });
      const before = RecoverySummaryCamelSchema.parse((answer._meta as { mend: { recovery: unknown } }).mend.recovery);
      await holder.kill();
      const after = RecoverySummaryCamelSchema.parse(await r.agent.request('_mend/session/recovery', { sessionId: SESSION }));
      const continued = (await r.agent.request('_mend/session/continue', { sessionId: SESSION, planId: after.planId })) as Record<string, unknown>;
      return { before, after, continued };
    });
    expect(run.value.before).toMatchObject({ cause: 'running', activeWriter: { pid: holder.pid } });
    expect(run.value.after).toMatchObject({ kind: 'interrupted_turn', cause: 'crash', activeWriter: null, canContinue: true });
    expect(run.value.continued).toMatchObject({ accepted: true, kind: 'interrupted_turn', stopReason: 'end_turn' });
  });

  it('terminal UI: /plan after SIGKILL no longer says running, and a prompt is sent', async () => {
    const sb = makeSandbox('stale-tui');
    installDangling(sb);
    const holder = await holdWithProcess(sb);
    const tui = await renderTui({
      home: sb.home,
      cwd: sb.cwd,
      target: { type: 'resume', target: SESSION },
      script: [{}, {}, { text: 'Sent after the holder died.' }],
    });
    try {
      await tui.see('READ-ONLY  in use by');
      await holder.kill();
      await tui.type('/plan');
      const frame = await tui.see('cause crash');
      expect(frame).toContain('cause crash');
      expect(tui.controller.getState().readOnly).toBeNull();
      await tui.type('go on');
      await tui.see('Sent after the holder died.');
    } finally {
      await tui.close();
    }
  });
});
