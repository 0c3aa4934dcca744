/**
 * Two causes beside a crash and an abort: a session another process is
 * writing is `running`, not crashed; a run that ended with a known error is
 * `failed`. Through the built CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, cleanupSandboxes, makeSandbox, mend, sessionFiles, singleResult, spawnMend, transcript, watchStdout, writeScript } from '../support/cli.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';

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
