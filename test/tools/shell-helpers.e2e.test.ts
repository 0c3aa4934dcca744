/**
 * Shell commands in helper processes (the daemon's runner) against the inline path, the
 * oracle: the same outcomes for the same commands, an abort that kills the command's
 * group, and a helper that dies answered with an error and replaced. The helper is the
 * built one (dist), as the daemon runs it.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runForegroundCommand } from '../../src/tools/shell-run/foreground-command.js';
import type { ForegroundCommand, ToolOutcome } from '../../src/tools/tool.js';
import { outsideTheProcess } from '../support/outside-the-process.js';
import { isAlive, makeTempDir, removeDir, waitUntilGone } from './helpers.js';

type Runner = { run: (run: ForegroundCommand, signal: AbortSignal) => Promise<ToolOutcome>; close(): Promise<void> };

const built = resolve(import.meta.dirname, '../../dist/src/tools/shell-run/worker-shell-runner.js');
let runner: Runner;
let dir: string;

beforeAll(async () => {
  outsideTheProcess('the built shell helper (dist)');
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build first`);
  const { workerShellRunner } = (await import(built)) as { workerShellRunner: (n: number) => Runner };
  runner = workerShellRunner(2);
  dir = await makeTempDir();
});
afterAll(async () => {
  await runner?.close();
  await removeDir(dir);
});

const command = (text: string, timeoutMs = 30_000): ForegroundCommand => ({
  command: text,
  directory: dir,
  env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir },
  timeoutMs,
  outputCap: 64 * 1024,
});

describe('shell commands in helper processes', () => {
  it.each([
    ['output and exit 0', 'echo hello; pwd'],
    ['stdout and stderr, exit 3', 'echo to-out; echo to-err >&2; exit 3'],
    ['no output', 'true'],
    ['a timeout', 'sleep 5'],
    ['output past the cap', 'head -c 200000 /dev/zero | tr "\\0" x'],
    ['a command that is not there', 'no-such-command-here'],
  ])('%s: the outcome the inline path gives', async (_name, text) => {
    const run = command(text, text.startsWith('sleep') ? 300 : 30_000);
    const inline = await runForegroundCommand(run, new AbortController().signal);
    const helped = await runner.run(run, new AbortController().signal);
    expect(helped).toEqual(JSON.parse(JSON.stringify(inline)));
  });

  it('many at once: each gets its own output', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => runner.run(command(`echo call-${i}`), new AbortController().signal)));
    outcomes.forEach((outcome, i) => {
      expect(outcome.isError).toBe(false);
      expect(outcome.display).toBe(`call-${i}\n`);
    });
  });

  it('an abort kills the command and its group', async () => {
    const controller = new AbortController();
    // A duration no other test uses: the sleep is found in the process table by it.
    const pending = runner.run(command(`sleep 60.4321 & wait`), controller.signal);
    const { spawnSync } = await import('node:child_process');
    let child = 0;
    for (let i = 0; i < 100 && child === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const found = spawnSync('pgrep', ['-f', '^sleep 60.4321$'], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean);
      if (found.length > 0) child = Number(found.at(-1));
    }
    expect(child).toBeGreaterThan(0);
    controller.abort();
    const outcome = await pending;
    expect(outcome.isError).toBe(true);
    expect(outcome.errorType).toBe('aborted');
    expect(outcome.output).toContain('Cancelled; the process group was killed.');
    await waitUntilGone(child);
    expect(isAlive(child)).toBe(false);
  });

  it('a helper that dies answers its call with an error, and the next call gets a new one', async () => {
    // $PPID of `bash -c` is the helper that started it.
    const died = await runner.run(command('kill -9 $PPID; sleep 5'), new AbortController().signal);
    expect(died.isError).toBe(true);
    expect(died.output).toMatch(/the shell helper process exited/);
    const next = await runner.run(command('echo again'), new AbortController().signal);
    expect(next.display).toBe('again\n');
  });

  it('its helper is a file of the build', () => {
    expect(existsSync(join(built, '..', 'shell-worker.js'))).toBe(true);
  });
});
