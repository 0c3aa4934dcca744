/**
 * What a new user tripped over on the command line: escape sequences from session
 * content in human-readable listings, export's skipped lines, local I/O problems as
 * usage (2) and store (4) errors, a base URL without a scheme, counts in words.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, LogBuilder, logPathOf, makeSandbox, mend, sessionFiles, snapshotTree } from '../support/cli.js';

afterAll(cleanupSandboxes);

const SID = '0b5e7c1a-2d4f-4e6a-9b8c-7d6e5f4a3b2c';
const ESC = '\u001b';
const TITLE = `${ESC}]0;pwned${ESC}\\`;
const CLEAR = `${ESC}[2J`;

describe('escape sequences from session content', () => {
  it('sessions list and plan print none of them', async () => {
    const sb = makeSandbox('first-use-escapes');
    new LogBuilder(SID, { cwd: sb.cwd })
      .user(`deploy ${TITLE}now${CLEAR}\u0007`)
      .assistant([{ functionCall: { id: 'call_1', name: `run${CLEAR}_shell`, args: {} } }])
      .write(logPathOf(sb, SID));
    const list = await mend(sb, ['sessions', 'list']);
    expect(list.exitCode).toBe(0);
    expect(list.stdout).toContain('deploy now');
    expect(list.stdout).not.toContain(ESC);
    expect(list.stdout).not.toContain('\u0007');
    const plan = await mend(sb, ['plan', SID]);
    expect(plan.exitCode).toBe(0);
    expect(plan.stdout).toContain('name=run_shell');
    expect(plan.stdout).not.toContain(ESC);
    // The JSON output keeps the data as it is.
    const json = await mend(sb, ['sessions', 'list', '--json']);
    expect(JSON.parse(json.stdout)[0].firstPrompt).toContain(CLEAR);
  });

  it('counts are in words: 1 record, not 1 records', async () => {
    const sb = makeSandbox('first-use-plural');
    new LogBuilder(SID, { cwd: sb.cwd }).user('only one').write(logPathOf(sb, SID));
    const list = await mend(sb, ['sessions', 'list']);
    expect(list.stdout).toMatch(/ 1 record /);
    const plan = await mend(sb, ['plan', SID]);
    expect(plan.stdout).toContain('1 record, 1 API entry, 0 gaps, 0 malformed lines');
    expect(plan.stdout).toContain('0 earlier recovery attempts');
  });
});

describe('sessions export of a damaged log', () => {
  it('says on stderr which lines it skipped, exit 0', async () => {
    const sb = makeSandbox('first-use-export');
    const path = new LogBuilder(SID, { cwd: sb.cwd })
      .user('one')
      .assistant([{ text: 'two' }])
      .write(logPathOf(sb, SID));
    appendFileSync(path, '{"torn": \n');
    const run = await mend(sb, ['sessions', 'export', SID]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(2);
    expect(run.stderr).toContain('line 3 not exported: not JSON');
    expect(run.stderr).toContain('skipped 1 damaged line');
  });

  it('an import with bad lines names each on stderr, exits 1 and writes nothing', async () => {
    const sb = makeSandbox('first-use-import-bad');
    const path = new LogBuilder(SID, { cwd: sb.cwd })
      .user('one')
      .assistant([{ text: 'two' }])
      .write(join(sb.scratch, 'in.ndjson'));
    appendFileSync(path, 'garbage\n{"uuid":"x"}\n');
    const run = await mend(sb, ['sessions', 'import', path]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('line 3 not imported: not JSON');
    expect(run.stderr).toContain('line 4 not imported: not a session record');
    expect(run.stderr).toContain('[malformed_line]');
    expect(run.stderr).toContain('2 bad lines');
    expect(run.stdout).toBe('');
    expect((await mend(sb, ['sessions', 'list'])).stdout).not.toContain(SID);
  });

  it('is silent on an intact log', async () => {
    const sb = makeSandbox('first-use-export-ok');
    new LogBuilder(SID, { cwd: sb.cwd }).user('one').write(logPathOf(sb, SID));
    const run = await mend(sb, ['sessions', 'export', SID]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe('');
  });
});

describe('local I/O problems use the exit-code table', () => {
  it('an import file that does not exist is a usage error (2)', async () => {
    const sb = makeSandbox('first-use-import');
    const run = await mend(sb, ['sessions', 'import', join(sb.scratch, 'missing.ndjson')]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('[usage]');
    expect(run.stderr).toContain('missing.ndjson');
    expect(snapshotTree(sb.home)).toEqual({});
  });

  it('MEND_HOME naming a file is a store error (4) for list, continue and a prompt', async () => {
    const sb = makeSandbox('first-use-home');
    const file = join(sb.scratch, 'not-a-dir');
    writeFileSync(file, 'x');
    for (const [home, args] of [
      [file, ['sessions', 'list']],
      [file, ['--continue']],
      [join(file, 'sub'), ['-p', 'hi', '--scripted-responses', file]],
    ] as const) {
      const run = await mend(sb, [...args], { env: { MEND_HOME: home } });
      expect(run.exitCode, args.join(' ')).toBe(4);
      expect(run.stderr).toContain('[store_unavailable]');
      expect(run.stderr).toContain('is not a directory');
      expect(run.stdout).not.toContain('no sessions');
    }
  });
});

describe('OPENAI_BASE_URL', () => {
  it('without a scheme is a usage error (2) that records nothing', async () => {
    const sb = makeSandbox('first-use-base-url');
    const run = await mend(sb, ['-p', 'hi'], { env: { OPENAI_API_KEY: 'k', OPENAI_MODEL: 'm', OPENAI_BASE_URL: 'localhost:8000/v1' } });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('OPENAI_BASE_URL must be an http:// or https:// URL');
    expect(sessionFiles(sb)).toEqual([]);
  });
});

describe('--resume of a file that names no session', () => {
  for (const [name, bytes] of [
    ['an empty file', ''],
    ['a garbage file', 'not json at all\n{"torn":'],
  ] as const) {
    it(`${name} not named by a UUID: a session error (3) before any prompt, the file untouched`, async () => {
      const sb = makeSandbox('first-use-nameless');
      const path = join(sb.scratch, 'notes.jsonl');
      writeFileSync(path, bytes);
      const script = join(sb.scratch, 'script.json');
      writeFileSync(script, '[{"text":"never"}]');
      for (const args of [
        ['--resume', path, '-p', 'hi', '--scripted-responses', script],
        ['--resume', path, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script],
      ]) {
        const run = await mend(sb, args, { input: '{"type":"user","message":{"role":"user","content":"hi"}}\n' });
        expect(run.exitCode, args.join(' ')).toBe(3);
        expect(run.stdout + run.stderr).toContain('holds no session to resume');
        expect(run.stdout + run.stderr).not.toContain('invalid record');
      }
      expect(readFileSync(path, 'utf8')).toBe(bytes);
    });
  }
});
