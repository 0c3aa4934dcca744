/**
 * Two machines, one database (acceptance), with the built CLI: two mend
 * processes with their own MEND_HOME and host name share a PostgreSQL store. A runs a
 * tool and is killed with SIGKILL mid-tool; while it lives B is refused; afterwards B
 * sees `interrupted_turn` caused by a crash, continues, and the tool does not run again.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import {
  cleanupSandboxes,
  killMarkedGroups,
  makeSandbox,
  markerLines,
  mend,
  singleResult,
  spawnMend,
  transcript,
  waitFor,
  writeScript,
} from '../support/cli.js';
import { databasesForFile, describePostgres } from '../support/postgres.js';

const database = databasesForFile('cli');
afterAll(cleanupSandboxes);

await describePostgres('mend on a shared PostgreSQL store (two machines)', () => {
  it('kill -9 on machine A mid-tool; B is refused while A lives, then continues the crash without re-running the tool', { timeout: 90_000 }, async () => {
    const db = await database();
    const a = makeSandbox('pg-a');
    const b = { ...makeSandbox('pg-b'), cwd: a.cwd };
    mkdirSync(b.home, { recursive: true });
    const marker = join(a.scratch, 'ran');
    const script = writeScript(a, [
      { text: 'Running it.', toolCalls: [{ id: 'call_slow', name: 'run_shell_command', args: { command: `echo $$ >> '${marker}'; sleep 30` } }] },
      { text: 'The command may have run; I checked and will not run it again.' },
    ]);
    const envA = { MEND_STORE: db.url, MEND_HOSTNAME: 'machine-a' };
    const envB = { MEND_STORE: db.url, MEND_HOSTNAME: 'machine-b' };

    const runA = spawnMend(a, ['-p', 'deploy', '--approval-mode', 'yolo', '--scripted-responses', script, '-o', 'stream-json'], { env: envA, timeout: 60_000 });
    try {
      await waitFor(() => markerLines(marker).length === 1, 30_000, 'the tool to start on machine A');

      const refused = await mend(b, ['--continue', '--continue-interrupted', '--scripted-responses', script, '-o', 'stream-json'], { env: envB });
      expect(refused.exitCode).toBe(3);
      expect(singleResult(refused.stdout).error).toMatchObject({ code: 'session_locked', holder: { host: 'machine-a', pid: runA.pid } });
      const live = transcript((await mend(b, ['--continue', '-o', 'stream-json'], { env: envB })).stdout);
      expect(live.recovery).toMatchObject({ cause: 'running', active_writer: { store: 'postgres', host: 'machine-a', pid: runA.pid } });

      runA.kill('SIGKILL');
      await runA;
    } finally {
      killMarkedGroups(marker);
    }

    const inspect = transcript((await mend(b, ['--continue', '-o', 'stream-json'], { env: envB })).stdout);
    expect(inspect.recovery).toMatchObject({ kind: 'interrupted_turn', cause: 'crash', can_continue: true, active_writer: null });

    const cont = await mend(
      b,
      ['--continue', '--continue-interrupted', '--plan-id', inspect.recovery!.plan_id, '--scripted-responses', script, '-o', 'stream-json'],
      { env: envB },
    );
    expect(cont.exitCode).toBe(0);
    const t = transcript(cont.stdout);
    expect(t.result).toMatchObject({ subtype: 'success', result: 'The command may have run; I checked and will not run it again.' });
    expect(t.users.flatMap((u) => u.message.content as Array<{ tool_use_id: string }>).map((c) => c.tool_use_id)).toEqual(['call_slow']);
    expect(markerLines(marker)).toHaveLength(1);

    const clean = transcript((await mend(b, ['--continue', '-o', 'stream-json'], { env: envB })).stdout);
    expect(clean.recovery).toMatchObject({ kind: 'clean' });

    // Reading an empty database writes nothing and says there is nothing there.
    const empty = await database();
    const none = await mend(b, ['sessions', 'list'], { env: { MEND_STORE: empty.url } });
    expect(none.stdout).toContain('no sessions');
  });
});
