/**
 * One writer per session, against the built CLI: 50 writers started together on one
 * session, forks and read-only runs alongside, and the takeover of a lock whose owner
 * was killed with SIGKILL.
 */
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupSandboxes,
  finished,
  logPathOf,
  makeSandbox,
  mend,
  singleResult,
  spawnMend,
  transcript,
  waitFor,
  watchStdout,
  writeScript,
  type Sandbox,
} from '../support/cli.js';
import { logLines } from '../support/reliability.js';

// makeSandbox registers every sandbox; cleanupSandboxes removes them after the file's tests.
const sandbox = makeSandbox;
afterAll(cleanupSandboxes);

const WRITERS = 50;
const FORKS = 3;

/** A clean session with one prompt and one answer; returns its id and log path. */
async function cleanSession(sb: Sandbox): Promise<{ id: string; log: string }> {
  const id = '7d1f0c2e-3b4a-4c5d-8e6f-0123456789ab';
  const script = writeScript(sb, [{ text: 'ready' }]);
  const r = await mend(sb, ['--session-id', id, '-p', 'setup', '--scripted-responses', script, '-o', 'stream-json']);
  expect(r.exitCode, r.stderr).toBe(0);
  return { id, log: logPathOf(sb, id) };
}

function parsedLines(log: string): Array<Record<string, unknown>> {
  // Every line must be one whole JSON record: JSON.parse throws on an interleaved or broken one.
  return logLines(log).map((l) => JSON.parse(l) as Record<string, unknown>);
}

function userText(rec: Record<string, unknown>): string | undefined {
  const parts = (rec['message'] as { parts?: Array<{ text?: string }> } | undefined)?.parts;
  return rec['type'] === 'user' ? parts?.[0]?.text : undefined;
}

describe('single writer per session', () => {
  it(`${WRITERS} writers started together: one writes, ${WRITERS - 1} exit 3 with session_locked naming its pid; forks and read-only runs work meanwhile`, async () => {
    const sb = sandbox('writers');
    const { id, log } = await cleanSession(sb);
    const original = readFileSync(log, 'utf8');
    const stall = writeScript(sb, [{ text: 'ready' }, { text: 'Stalling on purpose until killed', chunkSize: 4, stallMs: 'forever' }]);
    const answer = writeScript(sb, [{ text: 'ready' }, { text: 'fork answer' }]);

    const writers = Array.from({ length: WRITERS }, (_, i) => {
      const sub = spawnMend(sb, ['--resume', id, '-p', `writer-${i}`, '--scripted-responses', stall, '-o', 'stream-json'], { timeout: 180_000 });
      const state = { i, sub, done: undefined as Awaited<ReturnType<typeof finished>> | undefined };
      void finished(sub).then((r) => (state.done = r));
      return state;
    });
    const forks = Array.from({ length: FORKS }, (_, i) =>
      finished(spawnMend(sb, ['--resume', id, '--fork-session', '-p', `fork-${i}`, '--scripted-responses', answer, '-o', 'stream-json'], { timeout: 120_000 })),
    );

    await waitFor(() => writers.filter((w) => w.done).length >= WRITERS - 1, 150_000, `${WRITERS - 1} writers to exit`);
    // Give a second winner (if the lock were broken) time to show itself.
    await new Promise((r) => setTimeout(r, 500));
    const running = writers.filter((w) => !w.done);
    expect(running, 'exactly one writer keeps running').toHaveLength(1);
    const winner = running[0]!;
    const winnerPid = winner.sub.pid!;

    const losers = writers.filter((w) => w.done);
    for (const l of losers) {
      const r = l.done!;
      expect(r.exitCode, `writer-${l.i}: ${r.stdout}${r.stderr}`).toBe(3);
      const result = singleResult(r.stdout);
      expect(result, `writer-${l.i}`).toMatchObject({ type: 'result', is_error: true, error: { code: 'session_locked' } });
      expect(result.error!.message, `writer-${l.i}`).toContain(`pid ${winnerPid}`);
    }

    // Only the winner's prompt was added, as one whole line.
    await waitFor(() => logLines(log).length === original.split('\n').length, 10_000, "the winner's prompt");
    const whileHeld = readFileSync(log, 'utf8');
    expect(whileHeld.startsWith(original)).toBe(true);
    const added = parsedLines(log).slice(original.split('\n').length - 1);
    expect(added.map((r) => [r['type'], userText(r)])).toEqual([['user', `writer-${winner.i}`]]);
    expect(JSON.parse(readFileSync(`${log}.lock`, 'utf8'))).toMatchObject({ pid: winnerPid });

    // Forks started alongside: each succeeded in a new session file of its own.
    const forkRuns = await Promise.all(forks);
    const forkIds = new Set<string>();
    for (const [i, r] of forkRuns.entries()) {
      expect(r.exitCode, `fork-${i}: ${r.stdout}${r.stderr}`).toBe(0);
      const t = transcript(r.stdout);
      expect(t.result).toMatchObject({ is_error: false, result: 'fork answer' });
      const forkId = t.init.session_id;
      expect(forkId).not.toBe(id);
      forkIds.add(forkId);
      const forkLog = logPathOf(sb, forkId);
      const recs = parsedLines(forkLog);
      expect(recs.every((rec) => rec['sessionId'] === forkId)).toBe(true);
      expect(recs.some((rec) => userText(rec) === `fork-${i}`)).toBe(true);
    }
    expect(forkIds.size).toBe(FORKS);

    // Read-only runs succeed while the lock is held, and write nothing.
    const inspect = await mend(sb, ['--resume', id, '-o', 'stream-json']);
    expect(inspect.exitCode, inspect.stderr).toBe(0);
    expect(transcript(inspect.stdout).kinds).toEqual(['system:init', 'system:recovery', 'result']);
    const plan = await mend(sb, ['plan', id, '--json']);
    expect(plan.exitCode, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ sessionId: id, kind: 'interrupted_prompt' });
    const list = await mend(sb, ['sessions', 'list', '--json']);
    expect(list.exitCode, list.stderr).toBe(0);
    const ids = (JSON.parse(list.stdout) as Array<{ id: string }>).map((s) => s.id);
    expect(ids.sort()).toEqual([id, ...forkIds].sort());
    expect(readFileSync(log, 'utf8')).toBe(whileHeld);

    // Everyone else is gone; now end the winner.
    expect(winner.done).toBeUndefined();
    winner.sub.kill('SIGTERM');
    const end = await finished(winner.sub);
    expect(end.exitCode).toBe(143);
    const final = parsedLines(log);
    const mine = final.slice(original.split('\n').length - 1);
    expect(mine.map((r) => (r['type'] === 'system' ? `system:${String(r['subtype'])}` : r['type']))).toEqual(['user', 'assistant', 'system:turn_aborted']);
    expect(final.every((r) => r['sessionId'] === id)).toBe(true);
    expect(existsSync(`${log}.lock`)).toBe(false);
  }, 240_000);

  it('a lock left by a writer killed with SIGKILL is taken over at once by the next run', async () => {
    const sb = sandbox('takeover');
    const { id, log } = await cleanSession(sb);
    // The response played is the number of model entries so far: stall whichever comes.
    const stalling = { text: 'Stalling', chunkSize: 4, stallMs: 'forever' as const };
    const stall = writeScript(sb, [{ text: 'ready' }, stalling, stalling, stalling]);
    const answer = writeScript(sb, [{ text: 'ready' }, { text: 'second' }, { text: 'third' }, { text: 'fourth' }]);

    /** Time from spawn until the run's prompt is in the log. */
    const timeToFirstWrite = async (prompt: string) => {
      const lines = logLines(log).length;
      const t0 = performance.now();
      const sub = spawnMend(sb, ['--resume', id, '-p', prompt, '--scripted-responses', answer, '-o', 'stream-json']);
      await waitFor(
        () =>
          logLines(log)
            .slice(lines)
            .some((l) => l.includes(`"text":"${prompt}"`)),
        20_000,
        `${prompt} in the log`,
      );
      const ms = performance.now() - t0;
      const r = await finished(sub);
      expect(r.exitCode, r.stdout + r.stderr).toBe(0);
      return ms;
    };

    const baseline = await timeToFirstWrite('baseline');

    const victim = spawnMend(sb, ['--resume', id, '-p', 'victim', '--scripted-responses', stall, '-o', 'stream-json']);
    const victimOut = watchStdout(victim);
    await victimOut.waitFor((l) => l.includes('"subtype":"init"'), 20_000);
    await waitFor(() => readFileSync(log, 'utf8').includes('"text":"victim"'), 20_000, "the victim's prompt");
    expect(victimOut.text()).not.toContain('"type":"result"');
    victim.kill('SIGKILL');
    expect((await finished(victim)).signal).toBe('SIGKILL');
    const stale = JSON.parse(readFileSync(`${log}.lock`, 'utf8')) as { pid: number };
    expect(stale.pid).toBe(victim.pid);

    const takeover = await timeToFirstWrite('after-kill');
    console.info(`lock takeover: first write ${Math.round(takeover)} ms after spawn (no stale lock: ${Math.round(baseline)} ms)`);
    expect(takeover).toBeLessThan(baseline + 1_500);
    expect(takeover).toBeLessThan(5_000);
    expect(existsSync(`${log}.lock`)).toBe(false);
    for (const line of logLines(log)) JSON.parse(line);
  }, 60_000);

  it('an empty lock file (a writer killed between creating and filling it) is held while young, taken over once older than 2 s', async () => {
    const sb = sandbox('empty-lock');
    const { id, log } = await cleanSession(sb);
    const answer = writeScript(sb, [{ text: 'ready' }, { text: 'second' }]);
    writeFileSync(`${log}.lock`, '', { mode: 0o600 });
    const before = readFileSync(log);

    const young = await mend(sb, ['--resume', id, '-p', 'too early', '--scripted-responses', answer, '-o', 'stream-json']);
    expect(young.exitCode).toBe(3);
    expect(singleResult(young.stdout).error).toMatchObject({ code: 'session_locked' });
    expect(readFileSync(log).equals(before)).toBe(true);

    const old = new Date(Date.now() - 5_000);
    utimesSync(`${log}.lock`, old, old);
    const later = await mend(sb, ['--resume', id, '-p', 'after the grace period', '--scripted-responses', answer, '-o', 'stream-json']);
    expect(later.exitCode, later.stdout).toBe(0);
    expect(existsSync(`${log}.lock`)).toBe(false);
  });
});
