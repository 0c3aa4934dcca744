/**
 * Storage faults: a full disk, an I/O error on a write or an fsync, a commit the
 * database refuses. Each stops the turn with `store_unavailable` (exit 4 where the
 * process ends), is never treated as written, leaves no unterminated line behind for
 * the next writer, and is reported on every front end (headless text/json/stream-json,
 * stream-json input, the daemon, ACP).
 *
 * The full disk is real: a 2 MiB tmpfs mounted for this file (root only) and filled up
 * to a few KiB, so the session's first record fits and the model's 40 KiB answer does
 * not. Without mount permission that part is skipped loudly (failed under CI=true); the
 * I/O errors use the writer's fault hook (MEND_FAULT=fail-write / fail-fsync) either way.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { DaemonClient, DaemonSessionClient } from '@qwen-code/sdk/daemon';
import { afterAll, describe, expect, it } from 'vitest';
import { withAcp } from '../support/acp.js';
import { cleanupSandboxes, logPathOf, makeSandbox, mend, readLog, spawnMend, watchStdout, writeScript, type Sandbox } from '../support/cli.js';
import { adminQuery, databasesForFile, describePostgres } from '../support/postgres.js';
import { startDaemon, stopAllDaemons } from '../frontends/daemon/helpers.js';

type Event = { type: string; data: Record<string, unknown> };
const database = databasesForFile('storage');

function mountSmallFs(): { dir: string; unmount: () => void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'mend-smallfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs (${(error as Error).message.split('\n')[0]})`;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const mounted = mountSmallFs();
afterAll(async () => {
  await stopAllDaemons();
  if (typeof mounted !== 'string') mounted.unmount();
  cleanupSandboxes();
});
if (typeof mounted === 'string') console.warn(`\n!! SKIPPED: the full-disk tests need a small file system: ${mounted}\n`);
const describeFull = typeof mounted !== 'string' || process.env['CI'] === 'true' ? describe : describe.skip;

const BIG_ANSWER = 'x'.repeat(40 * 1024);
let homes = 0;

/** A sandbox whose MEND_HOME lives on the small file system, filled up to `freeBytes`. */
function fullSandbox(label: string, freeBytes = 12 * 1024): { sb: Sandbox; env: Record<string, string> } {
  if (typeof mounted === 'string') throw new Error(mounted);
  const sb = makeSandbox(label);
  const home = join(mounted.dir, `home-${++homes}`);
  mkdirSync(home);
  const filler = join(mounted.dir, 'filler');
  rmSync(filler, { force: true });
  const st = statfsSync(mounted.dir);
  writeFileSync(filler, Buffer.alloc(Math.max(0, st.bavail * st.bsize - freeBytes)));
  return { sb: { ...sb, home, chats: join(home, 'projects', sb.cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats') }, env: { MEND_HOME: home } };
}

/** Nothing acknowledged was lost, nothing unacknowledged stays: the prompt only, ending with a newline. */
function expectPromptOnly(sb: Sandbox, sessionId: string): void {
  const path = logPathOf(sb, sessionId);
  const bytes = readFileSync(path);
  expect(bytes.at(-1), 'the log ends with an unterminated line').toBe(0x0a);
  expect(readLog(path).map((r) => r.type)).toEqual(['user']);
}

describeFull('a full disk (ENOSPC on a real 2 MiB tmpfs)', () => {
  it('headless json and text: store_unavailable, exit 4, no unterminated line', { timeout: 90_000 }, async () => {
    for (const format of ['json', 'text'] as const) {
      const { sb, env } = fullSandbox(`enospc-${format}`);
      const sessionId = randomUUID();
      const script = writeScript(sb, [{ text: BIG_ANSWER, chunkSize: 8192 }]);
      const run = await mend(sb, ['--session-id', sessionId, '--scripted-responses', script, '-p', 'answer at length', '-o', format], { env });
      expect(run.exitCode, run.stderr).toBe(4);
      if (format === 'json') expect(JSON.parse(run.stdout)).toMatchObject({ is_error: true, error: { code: 'store_unavailable' } });
      else expect(run.stderr).toContain('[store_unavailable]');
      expect(run.stdout + run.stderr).toContain('ENOSPC');
      expectPromptOnly(sb, sessionId);
    }
  });

  it('stream-json input: the control answer, then the result carries store_unavailable; exit 4', { timeout: 90_000 }, async () => {
    const { sb, env } = fullSandbox('enospc-sj');
    const sessionId = randomUUID();
    const script = writeScript(sb, [{ text: BIG_ANSWER, chunkSize: 8192 }]);
    const sub = spawnMend(sb, ['--session-id', sessionId, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], {
      env,
      stdin: 'pipe',
      timeout: 60_000,
    });
    const out = watchStdout(sub);
    sub.stdin!.write(`${JSON.stringify({ type: 'control_request', request_id: 'init', request: { subtype: 'initialize' } })}\n`);
    sub.stdin!.write(`${JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: 'answer at length' }, parent_tool_use_id: null })}\n`);
    const result = JSON.parse(await out.waitFor((l) => l.includes('"type":"result"'), 30_000)) as Record<string, unknown>;
    sub.stdin!.end();
    const done = await sub;
    expect(result).toMatchObject({ is_error: true, error: { code: 'store_unavailable' } });
    expect(out.text()).toContain('"control_response"');
    expect(done.exitCode).toBe(4);
    expectPromptOnly(sb, sessionId);
  });

  it('daemon: the turn ends with store_unavailable on the event stream', { timeout: 90_000 }, async () => {
    const { sb, env } = fullSandbox('enospc-daemon');
    const script = writeScript(sb, [{ text: BIG_ANSWER, chunkSize: 8192 }]);
    const daemon = await startDaemon(sb, { args: ['--scripted-responses', script], env });
    const sessionId = randomUUID();
    const session = await DaemonSessionClient.createOrAttach(new DaemonClient({ baseUrl: daemon.url }), { workspaceCwd: sb.cwd, sessionId });
    const seen: Event[] = [];
    const ended = (async () => {
      for await (const event of session.events() as AsyncIterable<Event>) {
        seen.push(event);
        if (event.type === 'turn_complete' || event.type === 'turn_error') break;
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    await session.submitPrompt({ prompt: [{ type: 'text', text: 'answer at length' }] });
    await ended;
    const terminal = seen.find((e) => e.type === 'turn_error' || e.type === 'turn_complete');
    expect(terminal?.type, JSON.stringify(seen.map((e) => e.type))).toBe('turn_error');
    expect(JSON.stringify(terminal?.data)).toContain('store_unavailable');
    expect((await daemon.stop()).exitCode).toBe(0);
    expectPromptOnly(sb, sessionId);
  });

  it('ACP: the prompt is answered with store_unavailable', { timeout: 90_000 }, async () => {
    const { sb, env } = fullSandbox('enospc-acp');
    const script = writeScript(sb, [{ text: BIG_ANSWER, chunkSize: 8192 }]);
    const run = await withAcp(sb, { args: ['--scripted-responses', script], env }, async (r) => {
      await r.initialize();
      const { sessionId } = await r.agent.request(acp.methods.agent.session.new, { cwd: sb.cwd, mcpServers: [] });
      const answer = await r.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'answer at length' }] }).then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      );
      return { sessionId, answer };
    });
    expect(JSON.stringify(run.value.answer)).toContain('store_unavailable');
    expectPromptOnly(sb, run.value.sessionId);
  });
});

describe('I/O errors on a write and on an fsync (fault hook)', () => {
  for (const fault of ['fail-write:2:EIO', 'fail-fsync:2:EIO']) {
    it(`${fault}: store_unavailable, exit 4, the record is not left behind; the next run continues`, { timeout: 60_000 }, async () => {
      const sb = makeSandbox('eio');
      const sessionId = randomUUID();
      const script = writeScript(sb, [{ text: 'the answer' }, { text: 'the answer again' }]);
      const run = await mend(sb, ['--session-id', sessionId, '--scripted-responses', script, '-p', 'hello', '-o', 'json'], { env: { MEND_FAULT: fault } });
      expect(run.exitCode, run.stderr).toBe(4);
      expect(JSON.parse(run.stdout)).toMatchObject({ is_error: true, error: { code: 'store_unavailable' } });
      expectPromptOnly(sb, sessionId);
      const next = await mend(sb, ['--resume', sessionId, '--scripted-responses', script, '-p', 'again', '-o', 'json']);
      expect(next.exitCode, next.stderr).toBe(0);
      expect(existsSync(`${logPathOf(sb, sessionId)}.lock`)).toBe(false);
    });
  }
});

await describePostgres('a commit the database refuses', () => {
  it('headless json on PostgreSQL: store_unavailable, exit 4; the refused record is not stored', { timeout: 60_000 }, async () => {
    const db = await database();
    const sb = makeSandbox('pg-commit');
    const migrated = await mend(sb, ['store', 'migrate', '--store', db.url]);
    expect(migrated.exitCode, migrated.stderr).toBe(0);
    // A deferred check that fails at COMMIT for the model's answer (as a full disk or a broken replica would fail it).
    await adminQuery(
      `CREATE FUNCTION public.refuse_answers() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF NEW.type = 'assistant' THEN RAISE EXCEPTION 'could not write to file: No space left on device' USING ERRCODE = '53100'; END IF;
         RETURN NULL; END $$`,
      [],
      db.url,
    );
    await adminQuery(
      `CREATE CONSTRAINT TRIGGER refuse_answers AFTER INSERT ON mend.records DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.refuse_answers()`,
      [],
      db.url,
    );
    const sessionId = randomUUID();
    const script = writeScript(sb, [{ text: 'the answer' }]);
    const run = await mend(sb, ['--session-id', sessionId, '--scripted-responses', script, '-p', 'hello', '-o', 'json', '--store', db.url]);
    expect(run.exitCode, run.stderr).toBe(4);
    expect(JSON.parse(run.stdout)).toMatchObject({ is_error: true, error: { code: 'store_unavailable' } });
    const rows = await adminQuery('SELECT type FROM mend.records WHERE session_id = $1 ORDER BY seq', [sessionId], db.url);
    expect(rows.rows.map((r: { type: string }) => r.type)).toEqual(['user']);
  });
});
