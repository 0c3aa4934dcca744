/**
 * The command line of the built CLI: exit codes and structured errors in every output
 * format, errors that must not touch the disk, session selection (--continue, --resume,
 * --session-id, --fork-session), stdin handling, json and text output, `sessions list`
 * and `plan`.
 */
import { copyFileSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toRecoverySummaryCamel } from '../../src/frontends/shared/recovery-summary.js';
import { buildPlanForSession } from '../../src/recovery/build-plan.js';
import { loadSession } from '../../src/session/session-loader.js';
import { ResultMessageSchema, type SystemInitMessage, type SystemRecoveryMessage } from '../../src/wire/messages.js';
import { CORPUS_DIR } from '../support/corpus.js';
import {
  cleanupSandboxes,
  LogBuilder,
  finished,
  logPathOf,
  makeSandbox,
  mend,
  parseStreamJson,
  readLog,
  sessionFiles,
  snapshotTree,
  spawnMend,
  transcript,
  watchStdout,
  writeScript,
  type Sandbox,
} from '../support/cli.js';

const MISSING_ID = '9d2b7e3c-4a5f-4c1d-8e6b-0f1a2b3c4d5e';

/** Copies a corpus case into the sandbox's chats folder under its own session id; returns the id. */
function installCorpusCase(sb: Sandbox, name: string): string {
  const src = join(CORPUS_DIR, name, 'session.jsonl');
  const id = (JSON.parse(readFileSync(src, 'utf8').split('\n')[0]!) as { sessionId: string }).sessionId;
  mkdirSync(sb.chats, { recursive: true });
  copyFileSync(src, logPathOf(sb, id));
  return id;
}

/** A session whose last turn has a call without a result: interrupted_turn (crash). One model entry. */
function installInterruptedTurn(sb: Sandbox, id = '5c0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a'): string {
  new LogBuilder(id, { cwd: sb.cwd })
    .user('list the files')
    .assistant([{ functionCall: { id: 'call_1', name: 'list_directory', args: { path: '/tmp' } } }])
    .write(logPathOf(sb, id));
  return id;
}

function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('mend: error ['));
}

interface ErrorCase {
  name: string;
  code: string;
  exit: number;
  setup: (sb: Sandbox) => string[];
  /** The error comes after the session was opened: stream-json shows init (and a recovery line) first. */
  afterOpen?: boolean;
  /** Also checked in `-o json` (every case runs in stream-json and text). */
  json?: boolean;
}

const ERROR_CASES: ErrorCase[] = [
  { name: '--continue-interrupted with -p', code: 'usage', exit: 2, json: true, setup: () => ['--continue', '--continue-interrupted', '-p', 'x'] },
  { name: 'an unknown flag', code: 'usage', exit: 2, setup: () => ['-p', 'x', '--no-such-flag'] },
  { name: '--resume ../../x', code: 'invalid_resume_target', exit: 2, json: true, setup: () => ['--resume', '../../x'] },
  { name: '--resume <missing uuid>', code: 'session_not_found', exit: 3, json: true, setup: () => ['--resume', MISSING_ID] },
  { name: '--continue with no sessions', code: 'no_session_to_continue', exit: 3, setup: () => ['--continue'] },
  {
    name: '--session-id of an existing session',
    code: 'session_exists',
    exit: 3,
    setup: (sb) => {
      const id = installInterruptedTurn(sb);
      return ['--session-id', id, '-p', 'hello', '--scripted-responses', writeScript(sb, [{ text: 'never' }])];
    },
  },
  {
    name: '--plan-id that does not match',
    code: 'stale_plan',
    exit: 3,
    afterOpen: true,
    json: true,
    setup: (sb) => {
      installInterruptedTurn(sb);
      return [
        '--continue',
        '--continue-interrupted',
        '--plan-id',
        'rp_0000000000000000',
        '--scripted-responses',
        writeScript(sb, [{ text: 'a' }, { text: 'b' }]),
      ];
    },
  },
  {
    name: '--continue-interrupted on a degraded session',
    code: 'continuation_refused',
    exit: 3,
    afterOpen: true,
    setup: (sb) => {
      installCorpusCase(sb, 'history-gap-middle');
      return ['--continue', '--continue-interrupted', '--scripted-responses', writeScript(sb, [{ text: 'a' }, { text: 'b' }, { text: 'c' }])];
    },
  },
  {
    name: 'a prompt on a degraded session without --accept-degraded',
    code: 'degraded_history',
    exit: 3,
    afterOpen: true,
    json: true,
    setup: (sb) => {
      installCorpusCase(sb, 'history-gap-middle');
      return ['--continue', '-p', 'carry on', '--scripted-responses', writeScript(sb, [{ text: 'a' }, { text: 'b' }, { text: 'c' }])];
    },
  },
  {
    // Detectable before anything is sent: no key, so no model request can ever be made.
    name: 'a prompt with no OPENAI_API_KEY configured',
    code: 'provider_config_missing',
    // A configuration error, like a malformed script: the exit code table's 2.
    exit: 2,
    // Checked before the session is opened: no init, nothing on disk.
    afterOpen: false,
    json: true,
    setup: () => ['-p', 'hello', '--model', 'test-model', '--base-url', 'http://127.0.0.1:9/v1'],
  },
  {
    name: 'a prompt on an existing session with no OPENAI_API_KEY configured',
    code: 'provider_config_missing',
    exit: 2,
    // Checked before the session is opened: no init, nothing on disk.
    afterOpen: false,
    setup: (sb) => {
      const id = '6d7e8f90-a1b2-4c3d-8e4f-5a6b7c8d9e0f';
      new LogBuilder(id, { cwd: sb.cwd })
        .user('q')
        .assistant([{ text: 'a' }])
        .write(logPathOf(sb, id));
      return ['--resume', id, '-p', 'hello', '--model', 'test-model', '--base-url', 'http://127.0.0.1:9/v1'];
    },
  },
  {
    // The exit code table (--help, README): 2 = usage error, "malformed scripted responses" included.
    name: 'a malformed --scripted-responses file',
    code: 'provider_config_missing',
    exit: 2,
    // Checked before the session is opened: no init, nothing on disk.
    afterOpen: false,
    setup: (sb) => {
      const path = join(sb.scratch, 'bad-script.json');
      writeFileSync(path, '{"this is": "not an array"}');
      return ['-p', 'hello', '--scripted-responses', path];
    },
  },
];

afterAll(cleanupSandboxes);

describe.concurrent('errors: exit code, structured result, nothing written', { timeout: 60_000 }, () => {
  it.each(
    ERROR_CASES.flatMap((c) =>
      (c.json ? (['stream-json', 'json', 'text'] as const) : (['stream-json', 'text'] as const)).map((f) => [`${c.name} (${f})`, c, f] as const),
    ),
  )('%s', async (_label, c, format) => {
    const sb = makeSandbox('err');
    const args = c.setup(sb);
    const before = snapshotTree(sb.root);
    const r = await mend(sb, format === 'text' ? args : [...args, '-o', format]);
    expect(r.exitCode).toBe(c.exit);
    if (format === 'text') {
      expect(r.stdout).toBe('');
      expect(errorLines(r.stderr)).toHaveLength(1);
      expect(errorLines(r.stderr)[0]).toMatch(new RegExp(`^mend: error \\[${c.code}\\]: \\S`));
      if (c.afterOpen) {
        // A resumed session's notice may come first; the error is the last line.
        expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(errorLines(r.stderr)[0]);
      } else {
        // Nothing else happened, so the error is all there is: one line.
        expect(r.stderr).toMatch(new RegExp(`^mend: error \\[${c.code}\\]: [^\\n]+\\n$`));
      }
    } else {
      const messages = parseStreamJson(r.stdout);
      if (format === 'json') expect(messages).toHaveLength(1);
      const results = messages.filter((m) => m.type === 'result');
      expect(results).toHaveLength(1);
      expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'error_during_execution', is_error: true, error: { code: c.code } });
      if (format === 'stream-json' && c.afterOpen) {
        const t = transcript(r.stdout);
        if (c.code === 'stale_plan' || c.code === 'continuation_refused' || c.code === 'degraded_history') {
          expect(t.kinds).toEqual(['system:init', 'system:recovery', 'result']);
          expect(t.recovery!.action).toBe('refused');
          expect(t.recovery!.reason).toEqual(expect.any(String));
        }
      } else if (format === 'stream-json') {
        // Refused before a session was opened: the result is the only line.
        expect(messages).toHaveLength(1);
      }
      expect(r.stderr).toBe('');
    }
    // Nothing on disk changed: no new files or folders, no lock left, the session bytes as they were.
    expect(snapshotTree(sb.root)).toEqual(before);
  });

  it('--resume ../../x is refused before touching the disk: MEND_HOME is not even created', async () => {
    const sb = makeSandbox('err');
    const r = await mend(sb, ['--resume', '../../x', '-o', 'stream-json']);
    expect(r.exitCode).toBe(2);
    expect(snapshotTree(sb.home)).toEqual({});
    expect(snapshotTree(sb.root)).toEqual({ 'project/': 'dir', 'scratch/': 'dir' });
  });

  it('a second writer on a locked session gets session_locked naming the holder pid; inspecting still works', async () => {
    const sb = makeSandbox('lock');
    const id = '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    const stall = writeScript(sb, [{ text: 'holding the lock', chunkSize: 4, stallMs: 'forever' }]);
    const holder = spawnMend(sb, ['--session-id', id, '-p', 'hold it', '--scripted-responses', stall, '-o', 'stream-json', '--include-partial-messages']);
    try {
      await watchStdout(holder).waitFor((l) => l.includes('text_delta'));
      const script = writeScript(sb, [{ text: 'second writer' }]);
      const before = snapshotTree(sb.home);
      const streamed = await mend(sb, ['--resume', id, '-p', 'me too', '--scripted-responses', script, '-o', 'stream-json']);
      expect(streamed.exitCode).toBe(3);
      const result = parseStreamJson(streamed.stdout).at(-1)!;
      expect(result).toMatchObject({ type: 'result', is_error: true, error: { code: 'session_locked' } });
      expect((result as { error: { message: string } }).error.message).toContain(`pid ${holder.pid}`);

      const text = await mend(sb, ['--continue', '--continue-interrupted', '--scripted-responses', script]);
      expect(text.exitCode).toBe(3);
      expect(errorLines(text.stderr)).toEqual([expect.stringMatching(new RegExp(`^mend: error \\[session_locked\\]: .*pid ${holder.pid}`))]);

      // Reading takes no lock: inspecting the held session works.
      const inspect = await mend(sb, ['--resume', id, '-o', 'stream-json']);
      expect(inspect.exitCode).toBe(0);
      expect(transcript(inspect.stdout).recovery).toMatchObject({ kind: 'interrupted_prompt' });
      // Neither the refused writers nor the inspection changed anything (the holder's lock is still its own).
      expect(snapshotTree(sb.home)).toEqual(before);
    } finally {
      holder.kill('SIGKILL');
      await finished(holder);
    }
  });

  it('a prompt on a degraded session runs with --accept-degraded', async () => {
    const sb = makeSandbox('degraded');
    const id = installCorpusCase(sb, 'history-gap-middle');
    const script = writeScript(sb, [{ text: 'fresh start' }, { text: 'fresh start' }, { text: 'fresh start' }]);
    const r = await mend(sb, ['--resume', id, '-p', 'start over from here', '--accept-degraded', '--scripted-responses', script, '-o', 'stream-json']);
    expect(r.exitCode).toBe(0);
    const t = transcript(r.stdout);
    expect(t.recovery).toMatchObject({ kind: 'degraded_history', action: 'none' });
    expect(t.result).toMatchObject({ subtype: 'success', result: 'fresh start' });
    expect(readLog(logPathOf(sb, id)).at(-1)).toMatchObject({ type: 'assistant' });
  });
});

describe.concurrent('sessions, stdin and output formats', { timeout: 60_000 }, () => {
  it('exit 0 on success, and text mode prints the assistant text on stdout', async () => {
    const sb = makeSandbox('ok');
    const r = await mend(sb, ['-p', 'say hi', '--scripted-responses', writeScript(sb, [{ text: 'Hi there.' }])]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('Hi there.\n');
    expect(r.stderr).toBe('');
    expect(sessionFiles(sb)).toHaveLength(1);
  });

  it('--continue picks the session with the newest last record timestamp, not the newest file', async () => {
    const sb = makeSandbox('recent');
    const newer = 'ffffffff-0000-4000-8000-000000000001';
    const older = '00000000-ffff-4fff-8fff-ffffffffffff';
    const a = new LogBuilder(newer, { start: '2026-03-01T00:00:00.000Z', cwd: sb.cwd })
      .user('newer')
      .assistant([{ text: 'n' }])
      .write(logPathOf(sb, newer));
    const b = new LogBuilder(older, { start: '2026-02-01T00:00:00.000Z', cwd: sb.cwd })
      .user('older')
      .assistant([{ text: 'o' }])
      .write(logPathOf(sb, older));
    // The older session's file is the most recently modified one.
    utimesSync(a, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    utimesSync(b, new Date('2026-06-01T00:00:00Z'), new Date('2026-06-01T00:00:00Z'));
    const r = await mend(sb, ['--continue', '-o', 'stream-json']);
    expect(r.exitCode).toBe(0);
    const t = transcript(r.stdout);
    expect(t.init.session_id).toBe(newer);
    expect(t.recovery!.session_id).toBe(newer);
  });

  it('--fork-session copies into a new session with a parent_session record and leaves the source alone', async () => {
    const sb = makeSandbox('fork');
    const id = installCorpusCase(sb, 'dangling-single-call');
    const source = logPathOf(sb, id);
    const sourceBytes = readFileSync(source);
    const original = transcript((await mend(sb, ['--resume', id, '-o', 'stream-json'])).stdout).recovery!;

    // Inspecting with --fork-session writes nothing: a fork is made only for a run that writes.
    const inspected = await mend(sb, ['--resume', id, '--fork-session', '-o', 'stream-json']);
    expect(inspected.exitCode).toBe(0);
    expect(transcript(inspected.stdout).init.session_id).toBe(id);
    expect(sessionFiles(sb)).toHaveLength(1);

    // A host session (stream-json input) writes, so it works in a fork; no input, so nothing but the fork is written.
    const r = await mend(sb, ['--resume', id, '--fork-session', '--input-format', 'stream-json', '-o', 'stream-json'], { input: '' });
    expect(r.exitCode).toBe(0);
    const lines = parseStreamJson(r.stdout);
    expect(lines.map((m) => `${m.type}:${'subtype' in m ? m.subtype : ''}`)).toEqual(['system:init', 'system:recovery']);
    const t = { init: lines[0] as SystemInitMessage, recovery: lines[1] as SystemRecoveryMessage };
    const forked = t.recovery;
    expect(t.init.session_id).not.toBe(id);
    expect(forked.session_id).toBe(t.init.session_id);
    expect(forked.plan_id).not.toBe(original.plan_id);
    expect(forked.kind).toBe(original.kind);
    expect(forked.cause).toBe(original.cause);
    expect(forked.repairs).toEqual(original.repairs);
    expect(forked.continuation).toEqual(original.continuation);

    expect(readFileSync(source).equals(sourceBytes)).toBe(true);
    const files = sessionFiles(sb);
    expect(files).toHaveLength(2);
    const forkPath = logPathOf(sb, t.init.session_id);
    expect(files).toContain(forkPath);
    const records = readLog(forkPath);
    const sourceRecords = readLog(source);
    expect(records).toHaveLength(sourceRecords.length + 1);
    expect(records.every((rec) => rec.sessionId === t.init.session_id)).toBe(true);
    expect(records.at(-1)).toMatchObject({
      type: 'system',
      subtype: 'parent_session',
      parentUuid: sourceRecords.at(-1)!.uuid,
      systemPayload: { sourceSessionId: id, sourceLeafUuid: sourceRecords.at(-1)!.uuid },
    });
    expect(Object.keys(snapshotTree(sb.home)).filter((p) => p.endsWith('.lock'))).toEqual([]);
  });

  it('-p - reads the prompt from stdin', async () => {
    const sb = makeSandbox('stdin');
    const r = await mend(sb, ['-p', '-', '-o', 'stream-json', '--scripted-responses', writeScript(sb, [{ text: 'got it' }])], {
      input: 'PROMPT FROM STDIN\nsecond line\n',
    });
    expect(r.exitCode).toBe(0);
    expect(transcript(r.stdout).result).toMatchObject({ result: 'got it' });
    const [log] = sessionFiles(sb);
    expect(readLog(log!)[0]).toMatchObject({ type: 'user', message: { parts: [{ text: 'PROMPT FROM STDIN\nsecond line' }] } });
  });

  it('stdin left open is not read when --resume is given (the process does not hang)', async () => {
    const sb = makeSandbox('stdin-open');
    const id = installInterruptedTurn(sb);
    const sub = spawnMend(sb, ['--resume', id, '-o', 'stream-json'], { stdin: 'pipe', timeout: 15_000 });
    const r = await finished(sub);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(0);
    expect(transcript(r.stdout).recovery).toMatchObject({ kind: 'interrupted_turn' });
  });

  it('--output-format json prints exactly one JSON object, with `recovery` when resuming', async () => {
    const sb = makeSandbox('json');
    const id = installInterruptedTurn(sb);
    const r = await mend(sb, ['--resume', id, '-o', 'json']);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    const result = ResultMessageSchema.parse(JSON.parse(lines[0]!));
    expect(result).toMatchObject({ type: 'result', subtype: 'success', session_id: id });
    expect(result.recovery).toMatchObject({
      kind: 'interrupted_turn',
      cause: 'crash',
      can_continue: true,
      continuation: { mode: 'tool_result_parts', part_count: 1 },
    });

    // A new session: one object, no recovery.
    const fresh = await mend(sb, ['-p', 'hello', '-o', 'json', '--scripted-responses', writeScript(sb, [{ text: 'hey' }])]);
    expect(fresh.exitCode).toBe(0);
    const freshLines = fresh.stdout.split('\n').filter(Boolean);
    expect(freshLines).toHaveLength(1);
    const freshResult = ResultMessageSchema.parse(JSON.parse(freshLines[0]!));
    expect(freshResult).toMatchObject({ subtype: 'success', result: 'hey' });
    expect(freshResult.recovery).toBeUndefined();
  });

  it('text mode: the assistant text on stdout, the recovery notice on stderr', async () => {
    const sb = makeSandbox('text');
    const id = installInterruptedTurn(sb);
    const plan = JSON.parse((await mend(sb, ['plan', id, '--json'])).stdout) as { visibleNotice: string | null };
    expect(plan.visibleNotice).toEqual(expect.any(String));
    // One model entry in the history: the continuation plays response 1.
    const script = writeScript(sb, [{ text: 'unused' }, { text: 'Listed them after recovery.' }]);
    const r = await mend(sb, ['--resume', id, '--continue-interrupted', '--scripted-responses', script]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('Listed them after recovery.\n');
    expect(r.stderr).toContain(`mend: ${plan.visibleNotice!}`);
    expect(errorLines(r.stderr)).toEqual([]);
  });

  it('mend sessions list --json lists id, started, lastUpdate, records, firstPrompt and kind, newest first', async () => {
    const sb = makeSandbox('list');
    const s1 = 'aaaaaaaa-1111-4111-8111-111111111111';
    const s2 = 'bbbbbbbb-2222-4222-8222-222222222222';
    new LogBuilder(s1, { start: '2026-02-01T00:00:00.000Z', cwd: sb.cwd })
      .user('first prompt A')
      .assistant([{ text: 'done' }])
      .write(logPathOf(sb, s1));
    new LogBuilder(s2, { start: '2026-03-01T00:00:00.000Z', cwd: sb.cwd }).user('second prompt B').write(logPathOf(sb, s2));
    const before = snapshotTree(sb.root);
    const r = await mend(sb, ['sessions', 'list', '--json']);
    expect(r.exitCode).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(
      rows.map((row) => ({
        id: row['id'],
        started: row['started'],
        lastUpdate: row['lastUpdate'],
        records: row['records'],
        firstPrompt: row['firstPrompt'],
        kind: row['kind'],
      })),
    ).toEqual([
      {
        id: s2,
        started: '2026-03-01T00:00:01.000Z',
        lastUpdate: '2026-03-01T00:00:01.000Z',
        records: 1,
        firstPrompt: 'second prompt B',
        kind: 'interrupted_prompt',
      },
      { id: s1, started: '2026-02-01T00:00:01.000Z', lastUpdate: '2026-02-01T00:00:02.000Z', records: 2, firstPrompt: 'first prompt A', kind: 'clean' },
    ]);
    expect(snapshotTree(sb.root)).toEqual(before);
  });
});

describe.concurrent('mend plan', { timeout: 60_000 }, () => {
  it('--json prints the documented fields and never writes; --full adds both histories', async () => {
    const sb = makeSandbox('plan');
    const id = installCorpusCase(sb, 'parallel-calls-one-of-three-answered');
    const path = logPathOf(sb, id);
    const before = snapshotTree(sb.root);
    const r = await mend(sb, ['plan', path, '--json']);
    expect(r.exitCode).toBe(0);
    const plan = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(plan).sort()).toEqual(
      [
        'planId',
        'sessionId',
        'path',
        'recovered',
        'kind',
        'recoveryKind',
        'cause',
        'canContinue',
        'canAutoContinue',
        'requiresUserConfirmation',
        'previousAttempts',
        'visibleNotice',
        'activeWriter',
        'lastError',
        'leafUuid',
        'repairs',
        'repairDetails',
        'diagnostics',
        'historyGaps',
        'continuation',
        'history',
      ].sort(),
    );
    expect(plan).toMatchObject({
      sessionId: id,
      path,
      kind: 'interrupted_turn',
      cause: 'crash',
      canContinue: true,
      canAutoContinue: false,
      requiresUserConfirmation: true,
      previousAttempts: 0,
      repairs: [{ type: 'synthesized_tool_result', count: 2 }],
      repairDetails: [
        { type: 'synthesized_tool_result', callId: 'call_2', name: 'read_file' },
        { type: 'synthesized_tool_result', callId: 'call_3', name: 'run_shell_command' },
      ],
      diagnostics: [],
      historyGaps: [],
      continuation: { mode: 'tool_result_parts', partCount: 3, syntheticCallIds: ['call_2', 'call_3'] },
    });
    // The camelCase summary ACP and the daemon answer is part of it, field for field.
    const loaded = await loadSession(path);
    const camel = toRecoverySummaryCamel(buildPlanForSession(loaded), loaded.conversation);
    for (const [key, value] of Object.entries(camel)) if (key !== 'continuation') expect(plan[key]).toEqual(value);
    expect(plan['continuation']).toMatchObject(camel.continuation!);
    expect(plan['planId']).toMatch(/^rp_[0-9a-f]{16}$/);
    expect(plan['visibleNotice']).toContain('2 unfinished tool call');

    // Same plan id as the recovery line of an inspecting resume.
    const line = transcript((await mend(sb, ['--resume', id, '-o', 'stream-json'])).stdout).recovery!;
    expect(line.plan_id).toBe(plan['planId']);

    const full = JSON.parse((await mend(sb, ['plan', id, '--json', '--full'])).stdout) as Record<string, unknown>;
    expect(full['planId']).toBe(plan['planId']);
    expect(full['originalApiHistory']).toEqual(expect.any(Array));
    expect(full['apiHistory']).toEqual(expect.any(Array));
    expect((full['apiHistory'] as unknown[]).length).toBe(3);
    expect(JSON.stringify(full['apiHistory'])).toContain('call_3');
    expect(JSON.stringify(full['originalApiHistory'])).not.toEqual(JSON.stringify(full['apiHistory']));
    expect(snapshotTree(sb.root)).toEqual(before);
  });

  it('an empty log is a clean plan with zero records', async () => {
    const sb = makeSandbox('plan-empty');
    const path = join(sb.scratch, 'empty.jsonl');
    writeFileSync(path, '');
    const r = await mend(sb, ['plan', path, '--json']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      kind: 'clean',
      cause: 'none',
      canContinue: false,
      repairs: [],
      continuation: null,
      history: { records: 0, apiEntries: 0 },
    });
    expect(readFileSync(path, 'utf8')).toBe('');
    expect(snapshotTree(sb.home)).toEqual({});
  });

  const badTargets: Array<[string, string, (sb: Sandbox) => string]> = [
    [
      'a directory whose name ends in .jsonl',
      'session_read_failed',
      (sb) => {
        mkdirSync(join(sb.cwd, 'dir.jsonl'));
        return 'dir.jsonl';
      },
    ],
    ['a missing file', 'session_not_found', () => 'missing.jsonl'],
    ['a value that is neither a uuid nor a .jsonl path', 'invalid_resume_target', () => '../../x'],
  ];
  it.each(badTargets)('an unreadable input (%s) gives a typed error and a non-zero exit', async (_label, code, target) => {
    const sb = makeSandbox('plan-bad');
    const arg = target(sb);
    const before = snapshotTree(sb.root);
    const json = await mend(sb, ['plan', arg, '--json']);
    expect(json.exitCode).not.toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code } });
    const text = await mend(sb, ['plan', arg]);
    expect(text.exitCode).toBe(json.exitCode);
    expect(text.stdout).toBe('');
    expect(errorLines(text.stderr)).toEqual([expect.stringMatching(new RegExp(`^mend: error \\[${code}\\]`))]);
    expect(snapshotTree(sb.root)).toEqual(before);
  });
});
