/**
 * Two causes beside a crash and an abort: a session another process is
 * writing is `running`, not crashed; a run that ended with a known error is
 * `failed`. Through the built CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY,
  cleanupSandboxes,
  killMarkedGroups,
  logPathOf,
  makeSandbox,
  markerLines,
  mend,
  readLog,
  sessionFiles,
  singleResult,
  slowCommand,
  spawnMend,
  transcript,
  waitFor,
  watchStdout,
  writeScript,
  type Sandbox,
} from '../support/cli.js';
import { startOpenAIServer, textReply, type OpenAIServer } from '../support/openai-server.js';

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
  cleanupSandboxes();
});

describe('a live session is not a crash', () => {
  it('inspect and listing say running with the holder; continuing and fork-continuing it are refused session_locked', async () => {
    const sb = makeSandbox('live');
    const script = writeScript(sb, [{ text: 'thinking', stallMs: 'forever' }]);
    const holder = spawnMend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], { stdin: 'pipe' });
    const watch = watchStdout(holder);
    holder.stdin!.write(`${JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: 'go' }, parent_tool_use_id: null })}\n`);
    await watch.waitFor((l) => l.includes('"subtype":"init"'));
    // The prompt is on disk once the turn runs.
    for (let i = 0; i < 100 && sessionFiles(sb).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));

    const inspect = transcript((await mend(sb, ['--continue', '-o', 'stream-json'])).stdout);
    expect(inspect.recovery).toMatchObject({ cause: 'running', can_continue: false, active_writer: { pid: holder.pid } });
    expect(inspect.recovery!.visible_notice).toContain('in use');

    const cont = await mend(sb, ['--continue', '--continue-interrupted', '-o', 'stream-json']);
    expect(cont.exitCode).toBe(3);
    expect(singleResult(cont.stdout).error).toMatchObject({ code: 'session_locked', holder: { pid: holder.pid } });
    const fork = await mend(sb, ['--continue', '--fork-session', '--continue-interrupted', '-o', 'stream-json']);
    expect(fork.exitCode).toBe(3);
    expect(sessionFiles(sb)).toHaveLength(1);

    const list = JSON.parse((await mend(sb, ['sessions', 'list', '--json'])).stdout) as Array<{ cause: string }>;
    expect(list.map((r) => r.cause)).toEqual(['running']);
    holder.kill('SIGTERM');
    await holder;
  });
});

describe('a fork of a running session never retries its unfinished turn', () => {
  /** A stream-json run holding a new session, its turn started with `prompt` on the given script. */
  async function holdRunning(sb: Sandbox, prompt: string, script: string, until: () => boolean) {
    const holder = spawnMend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--approval-mode', 'yolo', '--scripted-responses', script], {
      stdin: 'pipe',
    });
    const watch = watchStdout(holder);
    holder.stdin!.write(`${JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: prompt }, parent_tool_use_id: null })}\n`);
    const init = JSON.parse(await watch.waitFor((l) => l.includes('"subtype":"init"'))) as { session_id: string };
    await waitFor(until, 45_000, 'the running turn on disk');
    return { holder, sessionId: init.session_id };
  }

  /** `-p` on a fork, against the loopback model; what the model was sent. */
  async function forkWithPrompt(sb: Sandbox, sessionId: string, prompt: string) {
    const before = server.requests.length;
    server.enqueue(textReply('All quiet.'));
    const env = { OPENAI_API_KEY: API_KEY, OPENAI_MODEL: 'test-model', OPENAI_BASE_URL: server.baseURL, MEND_OPENAI_MAX_RETRIES: '0' };
    const run = await mend(sb, ['--resume', sessionId, '--fork-session', '-p', prompt, '-o', 'stream-json', '--provider', 'openai'], { env });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const t = transcript(run.stdout);
    expect(server.requests.length - before).toBe(1);
    const sent = JSON.stringify(server.requests.at(-1)!.body.messages);
    return { t, sent, forkLog: readLog(logPathOf(sb, t.init.session_id)) };
  }

  it('a prompt still waiting for the model stays with its run: the fork sends only the new prompt', async () => {
    const sb = makeSandbox('fork-running-prompt');
    const script = writeScript(sb, [{ text: 'Deploying', stallMs: 'forever' }]);
    let logPath = '';
    const { holder, sessionId } = await holdRunning(sb, 'deploy to production', script, () => {
      const files = sessionFiles(sb);
      if (files.length === 0) return false;
      logPath = files[0]!;
      return readLog(logPath).some((r) => r.type === 'user');
    });
    const sourceBefore = readLog(logPath);
    try {
      const { t, sent, forkLog } = await forkWithPrompt(sb, sessionId, 'what is the status?');
      expect(t.recovery).toMatchObject({ kind: 'clean', can_continue: false });
      expect(t.result).toMatchObject({ is_error: false, result: 'All quiet.' });
      expect(sent).toContain('what is the status?');
      expect(sent).not.toContain('deploy to production');
      const texts = forkLog.filter((r) => r.type === 'user').map((r) => JSON.stringify(r.message.parts));
      expect(texts.some((p) => p.includes('deploy to production'))).toBe(false);
      const parent = forkLog.find((r) => r.type === 'system' && r.subtype === 'parent_session');
      expect(parent?.systemPayload).toMatchObject({ sourceSessionId: sessionId, omittedInFlightTail: { records: 1 } });
      // The source is the running process's: untouched.
      expect(readLog(logPath)).toEqual(sourceBefore);
    } finally {
      holder.kill('SIGTERM');
      await holder;
    }
  });

  it('a tool call still running stays with its run: the fork neither closes it nor repeats its prompt', async () => {
    const sb = makeSandbox('fork-running-call');
    const marker = `${sb.root}/slow.pids`;
    const script = writeScript(sb, [
      { text: 'Deploying.', toolCalls: [{ id: 'call_deploy', name: 'run_shell_command', args: { command: slowCommand(marker) } }] },
      { text: 'Deployed.' },
    ]);
    const { holder, sessionId } = await holdRunning(sb, 'deploy to production', script, () => markerLines(marker).length === 1);
    try {
      const { t, sent, forkLog } = await forkWithPrompt(sb, sessionId, 'what is the status?');
      expect(t.recovery).toMatchObject({ kind: 'clean', repairs: [] });
      expect(sent).not.toContain('deploy to production');
      expect(sent).not.toContain('call_deploy');
      expect(forkLog.some((r) => JSON.stringify(r).includes('call_deploy'))).toBe(false);
      const parent = forkLog.find((r) => r.type === 'system' && r.subtype === 'parent_session');
      expect(parent?.systemPayload).toMatchObject({ omittedInFlightTail: { records: 2 } });
      // The tool ran once, in the run that started it.
      expect(markerLines(marker)).toHaveLength(1);
    } finally {
      holder.kill('SIGTERM');
      await holder;
      killMarkedGroups(marker);
    }
  });
});

describe('a failed run is not a crash', () => {
  it('a provider error writes turn_failed; the plan says failed with the error and needs confirmation', async () => {
    const sb = makeSandbox('failed');
    const env = { OPENAI_API_KEY: API_KEY, OPENAI_MODEL: 'test-model', OPENAI_BASE_URL: server.baseURL, MEND_OPENAI_MAX_RETRIES: '0' };
    server.enqueue({ type: 'http_error', status: 400, body: { error: { message: 'model overloaded' } } });
    const run = await mend(sb, ['-p', 'hello', '-o', 'stream-json'], { env });
    expect(run.exitCode).toBe(1);
    const r = transcript((await mend(sb, ['--continue', '-o', 'stream-json', '--auto-continue'], { env })).stdout);
    expect(r.recovery).toMatchObject({
      kind: 'interrupted_prompt',
      cause: 'failed',
      last_error: { code: 'provider_error' },
      can_auto_continue: false,
      action: 'awaiting_confirmation',
    });
    expect(r.recovery!.visible_notice).toContain('model overloaded');
  });
});
