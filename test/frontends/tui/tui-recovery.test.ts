/**
 * Resuming in the terminal UI (design 4.1): /continue runs the plan the INFO
 * item showed and revalidates it; a new prompt is the other action; a degraded
 * history asks for the --accept-degraded confirmation; a session another
 * process holds is read-only with its holder; /resume picks from this
 * project's sessions; /plan, /clear.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../../src/recovery/index.js';
import { SessionRuntime } from '../../../src/runtime/session-runtime.js';
import { loadSession } from '../../../src/session/session-loader.js';
import { copyCase, listCorpus } from '../../support/corpus.js';
import { LogBuilder, cleanupSandboxes, readLog, trackTempDir } from '../../support/cli.js';
import { openRequest, renderTui, runtimeDeps, tempProject } from './tui-harness.js';

afterAll(cleanupSandboxes);

function corpusCopy(name: string): string {
  const c = listCorpus().find((x) => x.name === name)!;
  const { dir, sessionPath } = copyCase(c);
  trackTempDir(dir);
  return sessionPath;
}

/** The scripted model answers by the number of model entries already in the history; earlier slots are never used. */
const answerAt = (index: number, text: string) => [...Array.from({ length: index }, () => ({ text: 'unused' })), { text }];

describe('terminal UI: resume and /continue', () => {
  it('/continue runs the continuation of the plan it showed, never the tool; a second /continue is stale', async () => {
    const path = corpusCopy('dangling-single-call');
    const tui = await renderTui({ target: { type: 'resume', target: path }, script: answerAt(2, 'I will check the test state before running anything.') });
    try {
      await tui.see('INFO  interrupted_turn');
      const planId = tui.controller
        .getState()
        .view.done.find((i) => i.type === 'info')!
        .title.match(/rp_[0-9a-f]+/)![0];
      await tui.type('/continue');
      const frame = await tui.see('I will check the test state before running anything.');
      expect(frame).toContain(`continuing: plan ${planId} (interrupted_turn)`);
      expect(frame).toContain('closed the interrupted turn with 1 tool result (none re-run)');
      const records = readLog(path);
      const results = records.filter((r) => r.type === 'tool_result');
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ recovery: { planId, synthetic: true } });
      expect(records.some((r) => r.type === 'system' && r.subtype === 'recovery')).toBe(true);

      await tui.type('/continue');
      await tui.see(`error [stale_plan]: plan ${planId} is stale`);
    } finally {
      await tui.close();
    }
  });

  it('a new prompt instead of /continue: the repaired tail stays closed and the prompt is answered', async () => {
    const path = corpusCopy('dangling-single-call');
    const tui = await renderTui({ target: { type: 'resume', target: path }, script: answerAt(2, 'Fine, something else then.') });
    try {
      await tui.see('INFO  interrupted_turn');
      await tui.type('forget that, do something else');
      await tui.see('Fine, something else then.');
      const users = readLog(path).filter((r) => r.type === 'user');
      expect(users.at(-1)).toMatchObject({ message: { parts: [{ text: 'forget that, do something else' }] } });
    } finally {
      await tui.close();
    }
  });

  it('a degraded history refuses /continue and asks before a prompt runs on the history after the damage', async () => {
    const path = corpusCopy('history-gap-middle');
    const before = readFileSync(path);
    const modelEntries = buildPlanForSession(await loadSession(path)).apiHistory.filter((c) => c.role === 'model').length;
    const tui = await renderTui({ target: { type: 'resume', target: path }, script: answerAt(modelEntries, 'Answered on what is left.') });
    try {
      const frame = await tui.see('INFO  degraded_history');
      expect(frame).toContain('Continuing is refused [continuation_refused]');
      expect(frame).toContain('you will be asked to confirm');
      await tui.type('/continue');
      await tui.see('error [continuation_refused]');

      await tui.type('carry on');
      await tui.see('The history is degraded.');
      await tui.key('n');
      await tui.see('not sent: the history stays as it is');
      expect(readFileSync(path).equals(before)).toBe(true);

      await tui.type('carry on');
      await tui.see('The history is degraded.');
      await tui.key('y');
      await tui.see('✦ Answered on what is left.');
      expect(readLog(path).at(-1)).toMatchObject({ type: 'assistant' });
    } finally {
      await tui.close();
    }
  });

  it('a session another process holds is shown read-only with its holder; nothing is sent', async () => {
    const path = corpusCopy('dangling-single-call');
    const project = tempProject();
    const holder = await SessionRuntime.openForHost(
      runtimeDeps(project.home, project.cwd, [], process.pid),
      openRequest({ target: { type: 'resume', target: path } }),
    );
    const before = readFileSync(path);
    const tui = await renderTui({ ...project, target: { type: 'resume', target: path } });
    try {
      const frame = await tui.see('READ-ONLY  in use by');
      expect(frame).toContain(`test-host pid ${process.pid}`);
      expect(frame).toContain('INFO  interrupted_turn');
      expect(frame).toContain('Read-only: another process holds this session');
      expect(frame).not.toContain('→ /continue');
      await tui.type('/continue');
      await tui.see('error [session_locked]');
      await tui.type('hello?');
      await tui.see(/error \[session_locked\]: read-only/);
      expect(readFileSync(path).equals(before)).toBe(true);
    } finally {
      await tui.close();
      await holder.close();
    }
  });

  it('renders the INFO item in a 40-column terminal without a line wider than 40', async () => {
    const path = corpusCopy('parallel-calls-one-of-three-answered');
    const tui = await renderTui({ columns: 40, target: { type: 'resume', target: path } });
    try {
      const frame = await tui.see('INFO  interrupted_turn');
      for (const line of frame.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(40);
      expect(frame).toContain('→ /continue');
    } finally {
      await tui.close();
    }
  });

  it('--continue with no session of this project says so and starts a new one', async () => {
    const tui = await renderTui({ target: { type: 'latest' } });
    try {
      const frame = await tui.see('new session');
      expect(frame).toContain('error [no_session_to_continue]');
    } finally {
      await tui.close();
    }
  });

  it("/resume lists this project's sessions with kind, cause, size and age, and opens the one picked", async () => {
    const project = tempProject();
    const chats = join(project.home, 'projects', project.cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
    const crashed = '11111111-1111-4111-8111-111111111111';
    const clean = '22222222-2222-4222-8222-222222222222';
    new LogBuilder(crashed, { start: '2026-01-01T10:00:00.000Z' })
      .user('run it')
      .assistant([{ functionCall: { id: 'call_1', name: 'run_shell_command', args: { command: 'make' } } }])
      .write(join(chats, `${crashed}.jsonl`));
    new LogBuilder(clean, { start: '2026-01-02T10:00:00.000Z' })
      .user('hi')
      .assistant([{ text: 'hello' }])
      .write(join(chats, `${clean}.jsonl`));

    const tui = await renderTui(project);
    try {
      await tui.type('/resume');
      const picker = await tui.see('Resume a session of this project');
      expect(picker).toMatch(/› 22222222 {2}clean {2}cause none {2}2 rec {2}\d+[smhd] ago/);
      expect(picker).toMatch(/ {2}11111111 {2}interrupted_turn {2}cause crash {2}2 rec {2}\d+[smhd] ago/);
      await tui.key('\x1b[B');
      await tui.key('\r');
      const frame = await tui.see('INFO  interrupted_turn');
      expect(frame).toContain(`resumed session ${crashed}`);
      expect(frame).not.toContain('Resume a session of this project');
      expect(tui.controller.getState().sessionId).toBe(crashed);

      await tui.type('/plan');
      const plan = await tui.see('PLAN  rp_');
      expect(plan).toContain('kind interrupted_turn · cause crash');
      expect(plan).toContain('synthesized_tool_result callId=call_1 name=run_shell_command');

      await tui.type('/clear');
      await tui.see('new session');
      expect(tui.controller.getState().sessionId).not.toBe(crashed);
      expect(tui.controller.getState().view.done.some((i) => i.type === 'info')).toBe(false);
    } finally {
      await tui.close();
    }
  });

  it('a mistyped or unknown /resume says so and stays in the session that was open', async () => {
    const tui = await renderTui({ script: [{ text: 'the first answer' }] });
    try {
      await tui.type('hello');
      await tui.see('✦ the first answer');
      const before = tui.controller.getState().sessionId;
      for (const target of ['not-a-uuid', '9d2b7e3c-4a5f-4c1d-8e6b-0f1a2b3c4d5e']) {
        await tui.type(`/resume ${target}`);
        const frame = await tui.see(`still in session ${before}`);
        expect(frame).toContain('✦ the first answer');
        // Only the first session's own status line: no second, empty session was started.
        expect(frame.match(/new session/g)).toHaveLength(1);
        expect(tui.controller.getState().sessionId).toBe(before);
        await tui.type('/plan');
        await tui.see('PLAN  rp_');
      }
    } finally {
      await tui.close();
    }
  });

  it('/resume and /clear while a turn runs are refused; the turn goes on', async () => {
    const tui = await renderTui({ script: [{ text: 'slow answer done', stallMs: 1500 }] });
    try {
      await tui.type('take your time');
      await tui.see('working…');
      const before = tui.controller.getState().sessionId;
      await tui.type('/clear');
      await tui.see('a turn is running: stop it with Ctrl-C (or wait for it to end), then /clear');
      await tui.type('/resume 9d2b7e3c-4a5f-4c1d-8e6b-0f1a2b3c4d5e');
      await tui.see('then /resume');
      await tui.see('✦ slow answer done', 10_000);
      expect(tui.controller.getState().sessionId).toBe(before);
    } finally {
      await tui.close();
    }
  });

  it('a session recorded in another project warns that its tools act here', async () => {
    const other = tempProject();
    const id = '33333333-3333-4333-8333-333333333333';
    const path = new LogBuilder(id, { cwd: other.cwd })
      .user('hi')
      .assistant([{ text: 'hello' }])
      .write(join(other.cwd, `${id}.jsonl`));
    const tui = await renderTui({ target: { type: 'resume', target: path } });
    try {
      const frame = await tui.see('WARNING');
      expect(frame.replace(/[│\s]+/g, ' ')).toContain(`this session was recorded in ${other.cwd}; it now runs in`);
      expect(frame.replace(/[│\s]+/g, ' ')).toContain('its tools act here');
    } finally {
      await tui.close();
    }
  });
});
