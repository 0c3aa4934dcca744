import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shellTool } from '../../src/tools/shell-tool.js';
import { context, isAlive, killQuietly, makeTempDir, removeDir, waitUntilGone } from './helpers.js';

let dir: string;
const leftovers: number[] = [];
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  for (const pid of leftovers.splice(0)) killQuietly(pid);
  await removeDir(dir);
});

function pidFrom(output: string, label: string): number {
  const match = new RegExp(`${label}=(\\d+)`).exec(output);
  if (!match?.[1]) throw new Error(`no ${label} pid in output:\n${output}`);
  return Number(match[1]);
}

describe('run_shell_command', () => {
  it('reports output and exit code 0 as success', async () => {
    const outcome = await shellTool.execute({ command: 'echo hello; pwd' }, context(dir));
    expect(outcome.isError).toBe(false);
    expect(outcome.output).toContain('hello');
    expect(outcome.output).toContain(dir);
    expect(outcome.output).toContain('Exit code: 0');
  });

  it('combines stdout and stderr and makes a non-zero exit an error outcome', async () => {
    const outcome = await shellTool.execute({ command: 'echo to-out; echo to-err >&2; exit 3' }, context(dir));
    expect(outcome.isError).toBe(true);
    expect(outcome.errorType).toBe('shell_execute_error');
    expect(outcome.output).toContain('to-out');
    expect(outcome.output).toContain('to-err');
    expect(outcome.output).toContain('Exit code: 3');
  });

  it('caps output and says how much was left out', async () => {
    const outcome = await shellTool.execute({ command: "head -c 100000 /dev/zero | tr '\\0' a; echo; echo THE-END" }, context(dir, { outputCap: 1000 }));
    expect(outcome.isError).toBe(false);
    const total = 100_000 + 1 + 'THE-END\n'.length;
    expect(outcome.output).toContain(`[output truncated: ${total - 1000} bytes omitted]`);
    // The tail is kept: how a command ended matters most.
    expect(outcome.output).toContain('THE-END');
    expect(outcome.output.length).toBeLessThan(2000);
  });

  it('kills the whole process group on timeout', async () => {
    const started = Date.now();
    const outcome = await shellTool.execute({ command: 'sleep 30 & echo child=$!; wait', timeout: 500 }, context(dir));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(outcome.isError).toBe(true);
    expect(outcome.errorType).toBe('shell_timeout');
    expect(outcome.output).toContain('Timed out after 500 ms');
    const child = pidFrom(outcome.output, 'child');
    leftovers.push(child);
    expect(await waitUntilGone(child)).toBe(true);
  });

  it('kills the whole process group when the signal aborts', async () => {
    const controller = new AbortController();
    const run = shellTool.execute({ command: 'sleep 30 & echo child=$!; wait' }, context(dir, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 300);
    const outcome = await run;
    expect(outcome.isError).toBe(true);
    expect(outcome.errorType).toBe('aborted');
    const child = pidFrom(outcome.output, 'child');
    leftovers.push(child);
    expect(await waitUntilGone(child)).toBe(true);
  });

  it('does not start when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = await shellTool.execute({ command: `touch ${dir}/ran` }, context(dir, { signal: controller.signal }));
    expect(outcome.errorType).toBe('aborted');
  });

  it('returns when bash exits even if a background child keeps the pipe open', async () => {
    const started = Date.now();
    const outcome = await shellTool.execute({ command: 'sleep 20 & echo child=$!' }, context(dir));
    leftovers.push(pidFrom(outcome.output, 'child'));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome.isError).toBe(false);
    expect(outcome.output).toContain('Exit code: 0');
  });

  it('kills what a finished command left running in its group (`cmd &`)', async () => {
    const outcome = await shellTool.execute({ command: 'sleep 30 & echo started child=$!' }, context(dir));
    expect(outcome).toMatchObject({ isError: false });
    expect(outcome.output).toContain('started');
    const child = pidFrom(outcome.output, 'child');
    leftovers.push(child);
    expect(await waitUntilGone(child)).toBe(true);
  });

  it('starts a background command and returns its pid at once', async () => {
    const started = Date.now();
    const outcome = await shellTool.execute({ command: 'sleep 30', is_background: true }, context(dir));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome.isError).toBe(false);
    const pid = Number(/PID (\d+)/.exec(outcome.output)?.[1]);
    leftovers.push(pid);
    expect(isAlive(pid)).toBe(true);
    killQuietly(pid);
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it('runs in the given directory, absolute or relative to the project root', async () => {
    const ok = await shellTool.execute({ command: 'pwd', directory: dir }, context('/'));
    expect(ok.output).toContain(`Output: ${dir}`);
    await mkdir(join(dir, 'sub'));
    const relative = await shellTool.execute({ command: 'pwd', directory: 'sub' }, context('/', { projectRoot: dir }));
    expect(relative.output).toContain(`Output: ${join(dir, 'sub')}`);
    // Not confined: the shell may run anywhere the user can.
    const outside = await shellTool.execute({ command: 'pwd', directory: '/' }, context(dir));
    expect(outside).toMatchObject({ isError: false });
    const missing = await shellTool.execute({ command: 'pwd', directory: `${dir}/nope` }, context(dir));
    expect(missing.errorType).toBe('file_not_found');
  });

  it('rejects invalid arguments with an error outcome', async () => {
    const outcome = await shellTool.execute({ command: 42 }, context(dir));
    expect(outcome.isError).toBe(true);
    expect(outcome.output).toContain('Invalid arguments for run_shell_command: command:');
  });
});
