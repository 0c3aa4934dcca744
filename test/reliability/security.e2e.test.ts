/**
 * Security properties of the built CLI: what --resume accepts, file modes, the lock
 * never followed through a symlink, the tool output cap, secrets kept out of every
 * output and file, and what happens to a huge model response.
 */
import { capTextParts, MAX_TEXT_PART_BYTES } from '../../src/engine/record-caps.js';
import { existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSession } from '../../src/session/session-loader.js';
import { buildPlanForSession } from '../../src/recovery/build-plan.js';
import { validateProviderHistory } from '../../src/recovery/validate-history.js';
import {
  BIN,
  cleanupSandboxes,
  baseEnv,
  logPathOf,
  makeSandbox,
  mend,
  sessionFiles,
  singleResult,
  snapshotTree,
  transcript,
  waitFor,
  writeScript,
  type Sandbox,
} from '../support/cli.js';
import { filesContaining, logLines, modeOf, modesUnder, octal, startEchoServer, type EchoServer } from '../support/reliability.js';

// makeSandbox registers every sandbox; cleanupSandboxes removes them after the file's tests.
const sandbox = makeSandbox;
afterAll(cleanupSandboxes);

const SESSION = '0b5c7a9e-1d2f-4e3a-8b6c-5d4e3f2a1b0c';

async function cleanSession(sb: Sandbox, id = SESSION): Promise<string> {
  const script = writeScript(sb, [{ text: 'ready' }]);
  const r = await mend(sb, ['--session-id', id, '-p', 'setup', '--scripted-responses', script, '-o', 'stream-json']);
  expect(r.exitCode, r.stderr).toBe(0);
  return logPathOf(sb, id);
}

describe('--resume accepts only a UUID or a path ending in .jsonl', () => {
  const refused = ['../../x', 'a/b', '..', '', `${SESSION}/../../x`, `../${SESSION}`, `${SESSION}/x`, '/etc/passwd', '.jsonl', 'x.json', `${SESSION}.jsonl/`];
  it.each(refused.map((v) => [JSON.stringify(v), v]))('refuses %s before touching the disk', async (_, value) => {
    const sb = sandbox('resume-arg');
    // A valid model script, so the --resume value is the only thing wrong.
    const script = writeScript(sb, [{ text: 'never used' }]);
    const before = snapshotTree(sb.root);
    const runs = await Promise.all([
      mend(sb, ['--resume', value, '-o', 'stream-json']),
      mend(sb, ['--resume', value, '-p', 'hi', '-o', 'stream-json', '--scripted-responses', script]),
      mend(sb, ['--resume', value, '--continue-interrupted', '-o', 'stream-json']),
      mend(sb, ['plan', value, '--json']),
    ]);
    for (const [i, r] of runs.entries()) {
      expect(r.exitCode, `run ${i}: ${r.stdout}${r.stderr}`).toBe(2);
      const out = i < 3 ? singleResult(r.stdout).error : (JSON.parse(r.stdout) as { error: { code: string } }).error;
      expect(out?.code, `run ${i}`).toBe('invalid_resume_target');
    }
    expect(existsSync(sb.home), 'MEND_HOME was created').toBe(false);
    expect(snapshotTree(sb.root)).toEqual(before);
  });
});

describe('file modes', () => {
  it('session files are 0600 and the folders mend creates 0700, even with umask 000 (log, lock, fork)', async () => {
    const sb = sandbox('modes');
    const id = '5e0f2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9';
    const stall = writeScript(sb, [{ text: 'ready' }, { text: 'Stalling', chunkSize: 4, stallMs: 'forever' }]);
    const answer = writeScript(sb, [{ text: 'ready' }, { text: 'fork answer' }]);
    const under000 = (args: string[]) =>
      execa('bash', ['-c', `umask 000; exec "$@"`, 'bash', process.execPath, BIN, ...args], {
        cwd: sb.cwd,
        env: baseEnv(sb),
        extendEnv: false,
        reject: false,
        timeout: 30_000,
      });
    const first = await under000(['--session-id', id, '-p', 'setup', '--scripted-responses', stall, '-o', 'stream-json']);
    expect(first.exitCode, String(first.stderr)).toBe(0);
    const log = logPathOf(sb, id);

    // A writer holding the lock: the lock file is private too.
    const held = under000(['--resume', id, '-p', 'hold', '--scripted-responses', stall, '-o', 'stream-json']);
    await waitFor(() => existsSync(`${log}.lock`) && readFileSync(log, 'utf8').includes('"text":"hold"'), 20_000, 'the lock');
    const lockMode = modeOf(`${log}.lock`);
    const fork = await under000(['--resume', id, '--fork-session', '-p', 'fork', '--scripted-responses', answer, '-o', 'stream-json']);
    expect(fork.exitCode, String(fork.stderr)).toBe(0);
    held.kill('SIGTERM');
    await held;

    expect(octal(lockMode)).toBe('0600');
    const entries = modesUnder(sb.home);
    expect(sessionFiles(sb)).toHaveLength(2);
    expect(entries.filter((e) => e.dir).map((e) => [e.path, e.mode])).toEqual(entries.filter((e) => e.dir).map((e) => [e.path, '0700']));
    expect(entries.filter((e) => !e.dir).map((e) => [e.path, e.mode])).toEqual(entries.filter((e) => !e.dir).map((e) => [e.path, '0600']));
  });
});

describe('the lock is never followed through a symlink', () => {
  it('a symlink planted at <log>.lock: the writer refuses with session_locked, the victim and the log are untouched', async () => {
    const sb = sandbox('symlink');
    const log = await cleanSession(sb);
    const victim = join(sb.scratch, 'victim.txt');
    writeFileSync(victim, 'VICTIM CONTENT\n', { mode: 0o644 });
    const victimStat = statSync(victim);
    symlinkSync(victim, `${log}.lock`);
    const logBefore = readFileSync(log);
    const script = writeScript(sb, [{ text: 'ready' }, { text: 'should not run' }]);

    const r = await mend(sb, ['--resume', SESSION, '-p', 'write through the link?', '--scripted-responses', script, '-o', 'stream-json']);
    expect(r.exitCode).toBe(3);
    const result = singleResult(r.stdout);
    expect(result.error).toMatchObject({ code: 'session_locked' });
    expect(result.error!.message).toMatch(/symlink/);
    expect(readFileSync(victim, 'utf8')).toBe('VICTIM CONTENT\n');
    const after = statSync(victim);
    expect([after.mode, after.mtimeMs, after.ino]).toEqual([victimStat.mode, victimStat.mtimeMs, victimStat.ino]);
    expect(lstatSync(`${log}.lock`).isSymbolicLink()).toBe(true);
    expect(readFileSync(log).equals(logBefore)).toBe(true);

    // Reading takes no lock, so inspecting still works.
    const inspect = await mend(sb, ['--resume', SESSION, '-o', 'stream-json']);
    expect(inspect.exitCode).toBe(0);
  });

  it('a dangling symlink at the lock path of an existing or a new session: the target is never created', async () => {
    const sb = sandbox('dangling');
    const log = await cleanSession(sb);
    const target = join(sb.scratch, 'created-through-link.txt');
    symlinkSync(target, `${log}.lock`);
    const newId = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
    const newLog = logPathOf(sb, newId);
    const target2 = join(sb.scratch, 'created-through-link-2.txt');
    symlinkSync(target2, `${newLog}.lock`);
    const script = writeScript(sb, [{ text: 'ready' }, { text: 'x' }]);

    const existing = await mend(sb, ['--resume', SESSION, '-p', 'hi', '--scripted-responses', script, '-o', 'stream-json']);
    const fresh = await mend(sb, ['--session-id', newId, '-p', 'hi', '--scripted-responses', script, '-o', 'stream-json']);
    for (const r of [existing, fresh]) {
      expect(r.exitCode, r.stdout).toBe(3);
      expect(singleResult(r.stdout).error).toMatchObject({ code: 'session_locked' });
    }
    expect(existsSync(target)).toBe(false);
    expect(existsSync(target2)).toBe(false);
    expect(existsSync(newLog)).toBe(false);
  });
});

describe('tool output cap', () => {
  it('a shell command printing 1 MB is cut to the cap with a clear marker, in the log and on stdout', async () => {
    const sb = sandbox('cap');
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'call_big', name: 'run_shell_command', args: { command: "head -c 1048576 /dev/zero | tr '\\0' x; echo; echo TAIL-END" } }] },
      { text: 'done' },
    ]);
    const r = await mend(sb, ['-p', 'print a lot', '--scripted-responses', script, '--approval-mode', 'yolo', '-o', 'stream-json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const [log] = sessionFiles(sb);
    const line = logLines(log!).find((l) => l.includes('"type":"tool_result"'))!;
    expect(line.length).toBeLessThan(200 * 1024);
    expect(line).toMatch(/\[output truncated: \d+ bytes omitted\]/);
    const omitted = Number(/\[output truncated: (\d+) bytes omitted\]/.exec(line)![1]);
    expect(omitted).toBeGreaterThan(900 * 1024);
    expect(line).toContain('TAIL-END');
    const t = transcript(r.stdout);
    expect(JSON.stringify(t.users)).toMatch(/output truncated: \d+ bytes omitted/);
    expect(Math.max(...r.stdout.split('\n').map((l) => l.length))).toBeLessThan(300 * 1024);
  });
});

describe('secrets never leave the process', () => {
  let server: EchoServer;
  beforeAll(async () => {
    server = await startEchoServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const keys = [
    { key: 'sk-planted-XYZ123', fragments: ['sk-planted-XYZ123', 'planted-XYZ123', 'XYZ123'] },
    { key: 'opaque-planted-KEY-4711', fragments: ['opaque-planted-KEY-4711', 'KEY-4711'] },
  ];

  it.each(keys)('$key: not in stdout, stderr (--debug), error messages or any file under MEND_HOME, whatever the output format', async ({ key, fragments }) => {
    const sb = sandbox('secrets');
    const env = { OPENAI_API_KEY: key, MEND_OPENAI_MAX_RETRIES: '0' };
    const common = ['--base-url', server.baseURL, '--model', 'gpt-test', '--debug'];
    const id = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
    const runs = await Promise.all([
      mend(sb, ['--session-id', id, '-p', 'hello', '-o', 'stream-json', '--include-partial-messages', ...common], { env }),
      mend(sb, ['-p', 'hello', '-o', 'json', ...common], { env }),
      mend(sb, ['-p', 'hello', ...common], { env }),
    ]);
    runs.push(await mend(sb, ['--resume', id, '-p', 'again', '-o', 'stream-json', ...common], { env }));
    runs.push(await mend(sb, ['--resume', id, '--continue-interrupted', '-o', 'stream-json', ...common], { env }));
    runs.push(await mend(sb, ['plan', id, '--json', '--full', '--debug'], { env }));
    runs.push(await mend(sb, ['sessions', 'list', '--json', '--debug'], { env }));

    // The key did reach the server (so there was something to leak), and the server echoed it back.
    expect(server.requests.some((q) => q.headers['authorization'] === `Bearer ${key}`)).toBe(true);
    for (const [i, r] of runs.slice(0, 5).entries()) {
      expect(r.exitCode, `run ${i}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(`${r.stdout}${r.stderr}`, `run ${i}`).toMatch(/provider_error/);
      expect(`${r.stdout}${r.stderr}`, `run ${i}`).toMatch(/401/);
    }
    for (const [i, r] of runs.entries()) {
      for (const f of fragments) {
        expect(r.stdout.includes(f), `run ${i} stdout contains ${f}: ${r.stdout.slice(0, 2000)}`).toBe(false);
        expect(r.stderr.includes(f), `run ${i} stderr contains ${f}: ${r.stderr.slice(0, 2000)}`).toBe(false);
      }
      expect(r.stdout + r.stderr).not.toMatch(/Bearer\s+(?!\[redacted\])\S/);
    }
    for (const f of fragments) expect(filesContaining(sb.root, f), f).toEqual([]);
  });
});

describe('single huge records', () => {
  it('a model response of several MB is cut at the record cap, marked, and loads back', async () => {
    const sb = sandbox('huge');
    const size = 6 * 1024 * 1024;
    const text = 'H'.repeat(size - 8) + '-THE-END';
    const scriptPath = join(sb.scratch, 'huge.json');
    mkdirSync(sb.scratch, { recursive: true });
    writeFileSync(scriptPath, JSON.stringify([{ text, chunkSize: 512 * 1024 }]));
    const id = '2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a';
    const r = await mend(sb, ['--session-id', id, '-p', 'say a lot', '--scripted-responses', scriptPath, '-o', 'stream-json'], { timeout: 60_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const log = logPathOf(sb, id);
    const lines = logLines(log);
    const assistant = lines.find((l) => l.includes('"type":"assistant"'))!;
    // One text part is capped at MAX_TEXT_PART_BYTES (1 MiB) with a marker; the log line stays small.
    expect(assistant.length).toBeGreaterThan(MAX_TEXT_PART_BYTES);
    expect(assistant.length).toBeLessThan(MAX_TEXT_PART_BYTES + 4096);
    expect(assistant).toContain(`[mend: ${size - MAX_TEXT_PART_BYTES} bytes of text omitted`);
    expect(r.stdout).not.toContain('-THE-END');

    const loaded = await loadSession(log);
    const plan = buildPlanForSession(loaded);
    expect(plan.kind).toBe('clean');
    expect(validateProviderHistory(plan.apiHistory)).toEqual({ ok: true });
    expect(plan.apiHistory.at(-1)!.parts[0]!.text).toBe(capTextParts([{ text }])[0]!.text);
    const inspect = await mend(sb, ['--resume', id, '-o', 'stream-json']);
    expect(inspect.exitCode).toBe(0);
    expect(transcript(inspect.stdout).recovery).toMatchObject({ kind: 'clean' });
  }, 60_000);
});
