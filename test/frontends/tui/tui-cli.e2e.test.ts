/**
 * When the built CLI opens the terminal UI: only with a TTY on stdin and
 * stdout and no -p / stream-json / json. Without a terminal today's headless
 * behaviour stays; -i asks for the UI, so without one it is a usage error.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, makeSandbox, mend, transcript, writeScript } from '../../support/cli.js';

afterAll(cleanupSandboxes);

describe('choosing the terminal UI', () => {
  it('-i without a terminal is a usage error (exit 2)', async () => {
    const sb = makeSandbox('tui-cli');
    const run = await mend(sb, ['-i', 'hello']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('error [usage]: -i/--prompt-interactive needs a terminal');
  });

  it('-i with -p is a usage error', async () => {
    const sb = makeSandbox('tui-cli');
    const run = await mend(sb, ['-i', 'hello', '-p', 'hi']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('-i/--prompt-interactive cannot be combined with -p/--prompt');
  });

  it('without a terminal, -p stays headless', async () => {
    const sb = makeSandbox('tui-cli');
    const script = writeScript(sb, [{ text: 'headless answer' }]);
    const run = await mend(sb, ['-p', 'hi', '-o', 'stream-json', '--scripted-responses', script]);
    expect(run.exitCode).toBe(0);
    expect(transcript(run.stdout).result).toMatchObject({ result: 'headless answer' });
  });

  it('--help lists -i/--prompt-interactive', async () => {
    const sb = makeSandbox('tui-cli');
    const run = await mend(sb, ['--help']);
    expect(run.stdout).toMatch(/-i, --prompt-interactive/);
  });
});
