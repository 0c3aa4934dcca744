/** examples/resume-crashed-session.ts, compiled by `npm run build`, against a real crashed session. */
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { baseEnv, cleanupSandboxes, LogBuilder, makeSandbox, REPO_ROOT, writeScript, type Sandbox } from '../support/cli.js';
import { onlyLog } from './helpers.js';

afterAll(cleanupSandboxes);

const EXAMPLE = join(REPO_ROOT, 'dist/examples/resume-crashed-session.js');
const SID = '6f1d3c2a-8b4e-4f6a-9c1d-2e3f4a5b6c7d';

function crashedSession(sb: Sandbox): void {
  new LogBuilder(SID, { cwd: sb.cwd })
    .user('first question')
    .assistant([{ text: 'first answer' }])
    .user('the interrupted prompt')
    .write(join(sb.chats, `${SID}.jsonl`));
}

function runExample(sb: Sandbox, input: string) {
  const script = writeScript(sb, [{ text: 'first answer' }, { text: 'the continued answer' }]);
  return execa('node', [EXAMPLE, sb.cwd, '--', '--provider', 'scripted', '--scripted-responses', script], {
    env: baseEnv(sb),
    extendEnv: false,
    input,
    reject: false,
    timeout: 20_000,
  });
}

describe('example: resume-crashed-session', () => {
  it('shows the banner, asks, and continues on "y"', async () => {
    const sb = makeSandbox('sdk-example-yes');
    crashedSession(sb);
    const run = await runExample(sb, 'y\n');
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('state:   interrupted_prompt (cause: crash)');
    expect(run.stdout).toContain('repairs: none');
    expect(run.stdout).toContain('Continue the interrupted turn? [y/N]');
    expect(run.stdout).toContain('the continued answer');
    expect(run.stdout).toContain('Result: the continued answer');
    const texts = onlyLog(sb).flatMap((r) => (r.type === 'user' ? r.message.parts.map((p) => p.text) : []));
    expect(texts.filter((t) => t === 'the interrupted prompt')).toHaveLength(1);
  });

  it('does nothing on the default answer', async () => {
    const sb = makeSandbox('sdk-example-no');
    crashedSession(sb);
    const before = onlyLog(sb).length;
    const run = await runExample(sb, '\n');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('Not continuing.');
    expect(onlyLog(sb)).toHaveLength(before);
  });
});
