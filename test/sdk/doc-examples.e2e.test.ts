/**
 * The SDK examples of README.md ("## SDK") and docs/daemon.md ("## Example: the SDK") run
 * as written (only the import of 'mend' resolves to this build, and the literal URL, cwd
 * and session id are the test's) on a clean, a running and a degraded session: each ends,
 * exit 0, and the session's log is untouched. Also the SDK's contract behind them: a resume
 * that runs no turn ends with one `result` (`num_turns: 0`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { query } from '../../src/sdk/index.js';
import { ResultMessageSchema } from '../../src/wire/messages.js';
import {
  LogBuilder,
  REPO_ROOT,
  baseEnv,
  cleanupSandboxes,
  logPathOf,
  makeSandbox,
  sessionFiles,
  spawnMend,
  watchStdout,
  writeScript,
  type Sandbox,
} from '../support/cli.js';
import { startDaemon, stopAllDaemons } from '../frontends/daemon/helpers.js';
import { sdkOptions } from './helpers.js';

// Inside the package, so `import ... from 'mend'` is the package's own (self-reference), this build.
const SCRATCH = mkdtempSync(join(REPO_ROOT, '.doc-examples-'));
afterAll(async () => {
  await stopAllDaemons();
  rmSync(SCRATCH, { recursive: true, force: true });
  cleanupSandboxes();
});

const SID = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';

/** The first ```ts block after a heading. */
function codeBlock(file: string, heading: string): string {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  expect(at, `${file} has "${heading}"`).toBeGreaterThan(-1);
  const block = /```ts\n([\s\S]*?)```/.exec(text.slice(at))?.[1];
  expect(block).toBeDefined();
  return block!;
}

/** Replaces a literal the example holds (it must hold it: the test runs what is written). */
function substitute(code: string, literal: string, value: string): string {
  expect(code).toContain(literal);
  return code.split(literal).join(value);
}

type State = 'clean' | 'running' | 'degraded';

async function session(sb: Sandbox, state: State): Promise<() => void> {
  const path = logPathOf(sb, SID);
  if (state === 'clean')
    new LogBuilder(SID, { cwd: sb.cwd })
      .user('hi')
      .assistant([{ text: 'hello' }])
      .write(path);
  if (state === 'degraded') {
    const b = new LogBuilder(SID, { cwd: sb.cwd })
      .user('one')
      .assistant([{ text: 'two' }])
      .user('three')
      .assistant([{ text: 'four' }]);
    // A broken parent chain: the last record's parent is missing.
    (b.records[3] as { parentUuid: string }).parentUuid = 'missing-parent';
    b.write(path);
  }
  if (state !== 'running') return () => {};
  // A live writer: a stream-json run whose model never answers, holding the session.
  const script = writeScript(sb, [{ text: 'thinking', stallMs: 'forever' }]);
  const holder = spawnMend(sb, ['--session-id', SID, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], { stdin: 'pipe' });
  const watch = watchStdout(holder);
  holder.stdin!.write(`${JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: 'go' }, parent_tool_use_id: null })}\n`);
  await watch.waitFor((l) => l.includes('"type":"assistant"') || l.includes('"type":"stream_event"') || l.includes('"subtype":"init"'));
  for (let i = 0; i < 100 && sessionFiles(sb).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 300));
  return () => holder.kill('SIGKILL');
}

async function runScript(sb: Sandbox, name: string, code: string) {
  const file = join(SCRATCH, `${name}.mjs`);
  writeFileSync(file, code);
  return execa('node', [file], { cwd: sb.cwd, env: baseEnv(sb), extendEnv: false, reject: false, timeout: 45_000 });
}

const STATES: State[] = ['clean', 'running', 'degraded'];

describe("the README's SDK example, as written", { timeout: 90_000 }, () => {
  for (const state of STATES) {
    it(`ends on a ${state} session`, async () => {
      const sb = makeSandbox(`doc-readme-${state}`);
      const stop = await session(sb, state);
      try {
        const before = readFileSync(logPathOf(sb, SID));
        const code = substitute(codeBlock('README.md', '## SDK'), "'/work/app'", JSON.stringify(sb.cwd));
        const run = await runScript(sb, `readme-${state}`, code);
        expect(run.timedOut).toBe(false);
        expect(run.stderr).toBe('');
        expect(run.exitCode).toBe(0);
        if (state !== 'running') expect(readFileSync(logPathOf(sb, SID))).toEqual(before);
      } finally {
        stop();
      }
    });
  }
});

describe("docs/daemon.md's SDK example, as written", { timeout: 90_000 }, () => {
  for (const state of STATES) {
    it(`ends on a ${state} session`, async () => {
      const sb = makeSandbox(`doc-daemon-${state}`);
      const stop = await session(sb, state);
      const daemon = await startDaemon(sb);
      try {
        const before = readFileSync(logPathOf(sb, SID));
        let code = codeBlock('docs/daemon.md', '## Example: the SDK');
        code = substitute(code, "'http://127.0.0.1:41877'", JSON.stringify(daemon.url));
        code = substitute(code, "'/work/app'", JSON.stringify(sb.cwd));
        code = `const sessionId = ${JSON.stringify(SID)};\n${code}`;
        const run = await runScript(sb, `daemon-${state}`, code);
        expect(run.timedOut).toBe(false);
        expect(run.stderr).toBe('');
        expect(run.exitCode).toBe(0);
        if (state !== 'running') expect(readFileSync(logPathOf(sb, SID))).toEqual(before);
      } finally {
        await daemon.stop();
        stop();
      }
    });
  }
});

describe('a resume that runs no turn', () => {
  it('ends with one result, num_turns 0, after init and recovery', async () => {
    const sb = makeSandbox('doc-no-turn');
    new LogBuilder(SID, { cwd: sb.cwd })
      .user('hi')
      .assistant([{ text: 'hello' }])
      .write(logPathOf(sb, SID));
    const q = query({ options: sdkOptions(sb, undefined, { resume: SID }) });
    const seen = [];
    for await (const m of q) seen.push(m);
    expect(seen.map((m) => (m.type === 'system' ? `system/${m.subtype}` : m.type))).toEqual(['system/init', 'system/recovery', 'result']);
    const result = ResultMessageSchema.parse(seen[2]);
    expect(result).toMatchObject({ subtype: 'success', is_error: false, num_turns: 0, session_id: SID, result: 'clean: nothing to continue' });
  });

  it('a host that continues gets the continuation and its result, and no extra one', async () => {
    const sb = makeSandbox('doc-continue');
    new LogBuilder(SID, { cwd: sb.cwd })
      .user('first')
      .assistant([{ text: 'answer' }])
      .user('the interrupted prompt')
      .write(logPathOf(sb, SID));
    const q = query({ options: sdkOptions(sb, writeScript(sb, [{ text: 'unused' }, { text: 'continued' }]), { resume: SID }) });
    const results = [];
    for await (const m of q) {
      if (m.type === 'system' && m.subtype === 'recovery' && m.can_continue)
        expect(await q.continueLastTurn({ planId: m.plan_id })).toMatchObject({ accepted: true });
      if (m.type === 'result') results.push(m);
    }
    expect(results).toEqual([expect.objectContaining({ result: 'continued', num_turns: 1 })]);
  });
});
