/**
 * The runtime's opening and settings seams, in process: the settings every front
 * end builds with runtimeSettingsFrom (the daemon's keep the system prompt and the
 * tool filter), the error of a failed continuation keeps its own code, the
 * refusal of "nothing to do" is told from a refusal, and an "always allow" goes
 * through the runtime.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MendError } from '../../src/errors.js';
import { runtimeSettingsFrom } from '../../src/runtime/runtime-settings.js';
import { SessionRuntime } from '../../src/runtime/session-runtime.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { cleanupSandboxes } from '../support/cli.js';
import { inProcessDaemon } from '../support/in-process-hosts.js';
import { defaultSettings, runtimeFixture } from '../support/runtime.js';

afterAll(cleanupSandboxes);

const DANGLING = '38dff1b0-3406-4c0b-a5f4-8df5d96853fc';

describe('runtimeSettingsFrom and openForHost', { timeout: 30_000 }, () => {
  it('options by lifetime: the host gives the defaults, the session and the turn override theirs', () => {
    const host = {
      model: 'm',
      approvalMode: 'default' as const,
      allowedTools: ['read_file'],
      maxTurns: 5,
      systemPrompt: 'S',
      appendSystemPrompt: 'A',
      coreTools: ['read_file', 'run_shell_command'],
      excludeTools: ['run_shell_command'],
    };
    const settings = runtimeSettingsFrom({ host, session: { approvalMode: 'plan', allowAutoContinue: true }, turn: { maxTurns: 2 } });
    expect(settings).toEqual({
      model: 'm',
      approvalMode: 'plan',
      allowedTools: ['read_file'],
      maxTurns: 2,
      allowAutoContinue: true,
      acceptDegraded: false,
      systemPrompt: 'S',
      appendSystemPrompt: 'A',
      tools: { only: ['read_file', 'run_shell_command'], exclude: ['run_shell_command'] },
    });
    settings.allowedTools.push('x');
    expect(host.allowedTools).toEqual(['read_file']);
  });

  it("the daemon's sessions keep the host's system prompt and tool filter", async () => {
    const fixture = runtimeFixture([]);
    const daemon = inProcessDaemon(fixture, { systemPrompt: 'Be brief.', appendSystemPrompt: 'Say mend.', excludeTools: ['run_shell_command'] });
    try {
      const created = await daemon.call<{ sessionId: string; state: { _meta: { mend: { messages: Array<{ tools?: string[] }> } } } }>('POST', '/session', {
        cwd: fixture.cwd,
      });
      expect(created.status).toBe(200);
      const runtime = daemon.registry.get(created.body.sessionId)!.runtime;
      expect(runtime.systemPrompt()).toBe('Be brief.\n\nSay mend.');
      expect(runtime.settings.tools).toEqual({ only: undefined, exclude: ['run_shell_command'] });
      const init = created.body.state._meta.mend.messages[0]!;
      expect(init.tools).not.toContain('run_shell_command');
      expect(init.tools).toContain('read_file');
    } finally {
      await daemon.close();
    }
  });

  it('an error met while deciding a continuation keeps its own code (not nothing_to_continue)', async () => {
    const fixture = runtimeFixture([{}, {}, { text: 'x' }]);
    fixture.install('dangling-single-call', DANGLING);
    let failing = false;
    const store: SessionStore = Object.create(fixture.deps.store) as SessionStore;
    store.read = (ref) => (failing ? Promise.reject(new MendError('session_read_failed', 'the disk went away')) : fixture.deps.store.read(ref));
    const runtime = await SessionRuntime.openForHost(
      { ...fixture.deps, store },
      { target: { type: 'resume', target: DANGLING }, access: { mode: 'on_demand' }, settings: defaultSettings },
    );
    failing = true;
    const answer = await runtime.continueLastTurn({ planId: runtime.recoveryPlan!.planId });
    expect(answer).toMatchObject({ accepted: false, code: 'session_read_failed', message: 'the disk went away' });
    await runtime.close();
  });

  it('a continue on a clean session is "nothing to do", not a refusal; allowTool lets a tool run without asking', async () => {
    const fixture = runtimeFixture([]);
    fixture.install('clean-model-text-tail', DANGLING);
    const runtime = await SessionRuntime.openForHost(fixture.deps, {
      target: { type: 'resume', target: DANGLING },
      access: { mode: 'write_or_read_only' },
      settings: defaultSettings,
    });
    expect(runtime.decide({ type: 'continue' })).toMatchObject({ action: 'nothing_to_do', code: 'nothing_to_continue' });
    expect(await runtime.continueLastTurn()).toMatchObject({ accepted: false, code: 'nothing_to_continue' });
    runtime.allowTool('run_shell_command');
    expect(runtime.settings.allowedTools).toEqual(['run_shell_command']);
    await runtime.close();
  });
});
