/**
 * The daemon's life and death with a tool running: kill -9 leaves a session
 * that the next daemon loads as crashed and continues without re-running the
 * tool; SIGTERM interrupts the turn (recorded as aborted), closes the streams
 * with session_closed and exits 0, and the next load says `aborted`.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DaemonClient, DaemonSessionClient } from '@qwen-code/sdk/daemon';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SDKMessage } from '../../../src/sdk/index.js';
import { cleanupSandboxes, logPathOf, makeSandbox, readLog, waitFor, writeScript } from '../../support/cli.js';
import { call, killMarkedGroups, markerLines, slowCommand, startDaemon, stopAllDaemons } from './helpers.js';

type Event = { id?: number; type: string; data: Record<string, unknown> };

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

describe.concurrent('mend serve: SIGKILL and SIGTERM mid-tool', { timeout: 60_000 }, () => {
  it('kill -9 mid-tool, start another daemon: load shows crash, continue finishes without re-running the tool', async () => {
    const sb = makeSandbox('daemon-kill');
    const marker = join(sb.scratch, 'marker.txt');
    const script = writeScript(sb, [
      { text: 'Running the slow step.', toolCalls: [{ id: 'call_slow', name: 'run_shell_command', args: { command: slowCommand(marker) } }] },
      { text: 'Finished after recovery.' },
    ]);
    const args = ['--scripted-responses', script, '--approval-mode', 'yolo'];
    const first = await startDaemon(sb, { args });
    const sessionId = randomUUID();
    try {
      expect((await call(first.url, '/session', { body: { sessionId } })).status).toBe(200);
      expect((await call(first.url, `/session/${sessionId}/prompt`, { body: { prompt: [{ type: 'text', text: 'do the slow step' }] } })).status).toBe(202);
      await waitFor(() => markerLines(marker).length === 1, 15_000, 'the tool to start');
      expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
    } finally {
      killMarkedGroups(marker);
    }
    expect(readLog(logPathOf(sb, sessionId)).map((r) => r.type)).toEqual(['user', 'assistant']);

    const second = await startDaemon(sb, { args });
    const qwen = new DaemonClient({ baseUrl: second.url });
    const loaded = await DaemonSessionClient.load(qwen, sessionId, { workspaceCwd: sb.cwd });
    const recovery = (loaded.state as { _meta: { mend: { recovery: Record<string, unknown> } } })._meta.mend.recovery;
    expect(recovery).toMatchObject({ kind: 'interrupted_turn', cause: 'crash', canContinue: true, activeWriter: null });

    const q = connect({ url: second.url }).query({ options: { resume: sessionId } });
    const seen: SDKMessage[] = [];
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'system' && m.subtype === 'recovery') {
        expect(m).toMatchObject({ plan_id: recovery['planId'], cause: 'crash' });
        expect(await q.continueLastTurn({ planId: m.plan_id })).toMatchObject({ accepted: true });
      }
      if (m.type === 'result') break;
    }
    expect(seen.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Finished after recovery.' });
    expect(markerLines(marker)).toHaveLength(1);
    const log = readLog(logPathOf(sb, sessionId));
    expect(log.filter((r) => r.type === 'tool_result').map((r) => r.type === 'tool_result' && r.recovery?.synthetic)).toEqual([true]);
    expect((await second.stop()).exitCode).toBe(0);
  });

  it('SIGTERM mid-tool: the turn is recorded as aborted, streams end with session_closed, exit 0; the next load says aborted', async () => {
    const sb = makeSandbox('daemon-term');
    const marker = join(sb.scratch, 'marker.txt');
    const script = writeScript(sb, [
      { text: 'Running the slow step.', toolCalls: [{ id: 'call_slow', name: 'run_shell_command', args: { command: slowCommand(marker) } }] },
    ]);
    const args = ['--scripted-responses', script, '--approval-mode', 'yolo'];
    const daemon = await startDaemon(sb, { args });
    const qwen = new DaemonClient({ baseUrl: daemon.url });
    const sessionId = randomUUID();
    const session = await DaemonSessionClient.createOrAttach(qwen, { workspaceCwd: sb.cwd, sessionId });
    const events: Event[] = [];
    const reading = (async () => {
      for await (const e of session.events() as AsyncIterable<Event>) events.push(e);
    })().catch(() => undefined);
    let stopped: Awaited<ReturnType<typeof daemon.stop>>;
    try {
      await new Promise((r) => setTimeout(r, 100));
      await session.submitPrompt({ prompt: [{ type: 'text', text: 'do the slow step' }] });
      await waitFor(() => markerLines(marker).length === 1, 15_000, 'the tool to start');
      stopped = await daemon.stop('SIGTERM');
    } finally {
      killMarkedGroups(marker);
    }
    await reading;
    expect(stopped.exitCode).toBe(0);
    expect(stopped.stderr).toContain('sigterm: shutting down');
    const tail = events.filter((e) => e.id !== undefined).slice(-2);
    expect(tail.map((e) => e.type)).toEqual(['turn_complete', 'session_closed']);
    expect(tail[0]!.data).toMatchObject({ stopReason: 'cancelled', abortReason: 'sigterm' });
    expect(tail[1]!.data).toMatchObject({ sessionId, reason: 'server_shutdown' });
    const log = readLog(logPathOf(sb, sessionId));
    expect(log.at(-1)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'sigterm' } });

    const next = await startDaemon(sb, { args });
    const reloaded = await call(next.url, `/session/${sessionId}/load`, { body: { cwd: sb.cwd } });
    expect(reloaded.body['recovery']).toMatchObject({ cause: 'aborted', canAutoContinue: false });
    expect((await next.stop('SIGINT')).exitCode).toBe(0);
  });
});
