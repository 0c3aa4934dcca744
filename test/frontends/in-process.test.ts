/**
 * main() and the stdio front ends in process (no spawn): fast checks beside the
 * end-to-end suites, on the same corpus and the same scripted model.
 */
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { main, type MainIo } from '../../src/cli/main.js';
import { buildPlanForSession } from '../../src/recovery/build-plan.js';
import { loadSession } from '../../src/session/session-loader.js';
import { cleanupSandboxes, parseStreamJson, trackTempDir } from '../support/cli.js';
import { CORPUS_DIR } from '../support/corpus.js';

afterAll(cleanupSandboxes);

const DANGLING = '38dff1b0-3406-4c0b-a5f4-8df5d96853fc';

function memoryIo(input?: string): { io: MainIo; stdout: () => string; stderr: () => string; home: string; cwd: string } {
  const root = trackTempDir(realpathSync(mkdtempSync(join(tmpdir(), 'mend-inproc-'))));
  const cwd = join(root, 'project');
  mkdirSync(cwd);
  const home = join(root, 'home');
  const stdin = new PassThrough();
  if (input !== undefined) stdin.end(input);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdout = new PassThrough().on('data', (c: Buffer) => out.push(c));
  const stderr = new PassThrough().on('data', (c: Buffer) => err.push(c));
  return {
    io: { stdin: stdin as never, stdout, stderr, env: { MEND_HOME: home }, cwd, pid: process.pid },
    stdout: () => Buffer.concat(out).toString('utf8'),
    stderr: () => Buffer.concat(err).toString('utf8'),
    home,
    cwd,
  };
}

function install(home: string, cwd: string, name: string, id: string): string {
  const chats = join(home, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
  mkdirSync(chats, { recursive: true });
  const path = join(chats, `${id}.jsonl`);
  copyFileSync(join(CORPUS_DIR, name, 'session.jsonl'), path);
  return path;
}

describe('main() in process', () => {
  it('inspects a crashed session: init, the recovery line of the core plan, one result', async () => {
    const m = memoryIo();
    const path = install(m.home, m.cwd, 'dangling-single-call', DANGLING);
    const plan = buildPlanForSession(await loadSession(path));
    expect(await main(['--resume', DANGLING, '-o', 'stream-json'], m.io)).toBe(0);
    const lines = parseStreamJson(m.stdout());
    expect(lines.map((l) => l.type)).toEqual(['system', 'system', 'result']);
    expect(lines[1]).toMatchObject({ subtype: 'recovery', plan_id: plan.planId, kind: plan.kind, cause: plan.cause, action: 'awaiting_confirmation' });
  });

  it('serves the control protocol from stdin: a continue is answered and runs as one turn with one result', async () => {
    const m = memoryIo();
    install(m.home, m.cwd, 'dangling-single-call', DANGLING);
    const script = join(m.cwd, '..', 'script.json');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(script, JSON.stringify([{}, {}, { text: 'Checked.' }]));
    const stdin = new PassThrough();
    const m2 = { ...m, io: { ...m.io, stdin: stdin as never } };
    stdin.end(`${JSON.stringify({ type: 'control_request', request_id: 'c1', request: { subtype: 'continue_last_turn' } })}\n`);
    const code = await main(['--resume', DANGLING, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], m2.io);
    expect(code).toBe(0);
    const lines = m
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const answer = lines.find((l) => l['type'] === 'control_response') as { response: { response: Record<string, unknown> } };
    expect(answer.response.response).toMatchObject({ accepted: true, kind: 'interrupted_turn' });
    expect(lines.filter((l) => l['type'] === 'result')).toEqual([expect.objectContaining({ subtype: 'success', result: 'Checked.' })]);
  });

  it('a usage error is one structured result and exit 2', async () => {
    const m = memoryIo();
    expect(await main(['--max-turns', '0', '-p', 'x', '-o', 'stream-json'], m.io)).toBe(2);
    expect(parseStreamJson(m.stdout())).toEqual([
      expect.objectContaining({ type: 'result', is_error: true, error: expect.objectContaining({ code: 'usage' }) }),
    ]);
  });

  it('a prompt on a degraded history is refused with its code, and nothing is written', async () => {
    const m = memoryIo();
    const id = 'aaaaaaaa-1111-4222-8333-444444444444';
    const path = install(m.home, m.cwd, 'history-gap-middle', id);
    const { readFileSync } = await import('node:fs');
    const before = readFileSync(path);
    expect(
      await main(['--resume', id, '-p', 'go on', '-o', 'stream-json', '--scripted-responses', '/nonexistent.json', '--provider', 'scripted'], m.io),
    ).not.toBe(0);
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
