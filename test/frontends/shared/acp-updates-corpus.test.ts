/**
 * One mapping for ACP updates: every corpus case loaded through the ACP agent
 * (`session/load` replays the conversation as `session/update`s) and through the
 * daemon (`POST /session/:id/load` answers `compactedReplay`) must give identical
 * updates. Both front ends in process on one store; the daemon's session is
 * closed before ACP loads it, so both see the same plan.
 */
import { randomUUID } from 'node:crypto';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSession } from '../../../src/session/session-loader.js';
import { cleanupSandboxes } from '../../support/cli.js';
import { CORPUS_DIR, listCorpus } from '../../support/corpus.js';
import { inProcessDaemon, withInProcessAcp } from '../../support/in-process-hosts.js';
import { runtimeFixture } from '../../support/runtime.js';

afterAll(cleanupSandboxes);

const cases = listCorpus();

describe('ACP updates: one mapping for ACP and the daemon', { timeout: 60_000 }, () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases.map((c) => [c.name] as const))('%s: the same replay through ACP and the daemon', async (name) => {
    const fixture = runtimeFixture([]);
    const sessionId = (await loadSession(`${CORPUS_DIR}/${name}/session.jsonl`)).conversation.sessionId || randomUUID();
    fixture.install(name, sessionId);

    const daemon = inProcessDaemon(fixture);
    const loaded = await daemon.call<{ compactedReplay: Array<{ type: string; data: { sessionId: string; update: unknown } }> }>(
      'POST',
      `/session/${sessionId}/load`,
      { cwd: fixture.cwd },
    );
    expect(loaded.status).toBe(200);
    await daemon.close();
    expect(loaded.body.compactedReplay.every((e) => e.type === 'session_update' && e.data.sessionId === sessionId)).toBe(true);
    const viaDaemon = loaded.body.compactedReplay.map((e) => e.data.update);

    const viaAcp = await withInProcessAcp(fixture, async (run) => {
      await run.agent.request(acp.methods.agent.session.load, { sessionId, cwd: fixture.cwd, mcpServers: [] });
      // The replay goes out before the answer; what follows it (the notice, the commands) is not the conversation.
      return run.updatesOf(sessionId).filter((u) => u.sessionUpdate !== 'notice' && u.sessionUpdate !== 'available_commands_update' && !isNotice(u));
    });

    expect(viaAcp).toEqual(viaDaemon);
    if (name !== 'empty-session') expect(viaDaemon.length).toBeGreaterThan(0);
    if (name === 'dangling-single-call') {
      // The case the issue names: one tool_call, failed, outcome unknown, titled by what the call does.
      const calls = (viaDaemon as Array<Record<string, unknown>>).filter((u) => u['sessionUpdate'] === 'tool_call');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({
        toolCallId: 'call_1',
        status: 'failed',
        kind: 'execute',
        _meta: { mend: { outcomeUnknown: true, resultRecorded: false } },
      });
      expect(calls[0]!['title']).toBe('run_shell_command: Run the checkout test 5 times');
    }
    // A call without a recorded result is shown once, failed, with the outcome unknown (never in progress).
    for (const update of viaDaemon as Array<Record<string, unknown>>) {
      expect(update['sessionUpdate']).not.toBe('tool_call_update');
      if (update['sessionUpdate'] === 'tool_call') expect(update['status']).not.toBe('in_progress');
    }
  });
});

function isNotice(update: acp.SessionUpdate): boolean {
  return (update as { _meta?: { mend?: { notice?: unknown } } })._meta?.mend?.notice === true;
}
