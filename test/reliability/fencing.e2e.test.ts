/**
 * Fencing before side effects, end to end: a writer waits for a permission answer,
 * loses its lease meanwhile (PostgreSQL: its connection is terminated; JSONL: its lock
 * file is taken away), another process takes the session over with
 * `--continue-interrupted` and answers the call "outcome unknown"; then the old
 * writer's client approves. The old writer must prove its lease before it acts: the
 * command never runs, the turn ends with `session_lease_lost`, its clients are told,
 * and nothing of it follows the new writer's records.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonClient, DaemonSessionClient } from '@qwen-code/sdk/daemon';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatRecord } from '../../src/session/records.js';
import { cleanupSandboxes, logPathOf, makeSandbox, mend, readLog, spawnMend, watchStdout, writeScript, type Sandbox } from '../support/cli.js';
import { adminQuery, databasesForFile, describePostgres } from '../support/postgres.js';
import { startDaemon, stopAllDaemons } from '../frontends/daemon/helpers.js';

type Event = { id?: number; type: string; data: Record<string, unknown> };

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});
const database = databasesForFile('fence');

function scriptFor(sb: Sandbox, marker: string): string {
  // Response 0: the call that needs approval; response 1: the answer after one model entry (the takeover's).
  return writeScript(sb, [
    { text: 'Running the step.', toolCalls: [{ id: 'call_1', name: 'run_shell_command', args: { command: `echo ran >> '${marker}'` } }] },
    { text: 'Taken over: the step is in an unknown state.' },
  ]);
}

/** The takeover: another process continues the interrupted turn; call_1 gets a synthetic "outcome unknown". */
async function takeOver(sb: Sandbox, script: string, sessionId: string, storeArgs: string[]): Promise<void> {
  const run = await mend(sb, ['--resume', sessionId, '--continue-interrupted', '--scripted-responses', script, '-o', 'json', ...storeArgs], {
    timeout: 60_000,
  });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ subtype: 'success', result: 'Taken over: the step is in an unknown state.' });
}

function expectTakeoverLast(records: readonly ChatRecord[]): void {
  const results = records.filter((r) => r.type === 'tool_result');
  expect(results).toHaveLength(1);
  expect(results[0]).toMatchObject({ recovery: { synthetic: true }, toolCallResult: { callId: 'call_1' } });
  expect(records.at(-1)).toMatchObject({ type: 'assistant' });
}

describe('fencing on the JSONL store', () => {
  it('stream-json writer whose lock was taken away never runs the approved tool and ends with session_lease_lost', { timeout: 120_000 }, async () => {
    const sb = makeSandbox('fence-jsonl');
    const marker = join(sb.scratch, 'ran.txt');
    const script = scriptFor(sb, marker);
    const sessionId = randomUUID();
    const a = spawnMend(
      sb,
      ['--session-id', sessionId, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script, '--permission-timeout', '120000'],
      { stdin: 'pipe', timeout: 120_000 },
    );
    const out = watchStdout(a);
    const control = (id: string, request: Record<string, unknown>) => JSON.stringify({ type: 'control_request', request_id: id, request });
    a.stdin!.write(`${control('init', { subtype: 'initialize' })}\n`);
    a.stdin!.write(`${JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: 'run the step' }, parent_tool_use_id: null })}\n`);
    const ask = JSON.parse(await out.waitFor((l) => l.includes('"subtype":"can_use_tool"'), 30_000)) as { request_id: string };

    // The lock is taken away (removed by hand, or judged stale by mistake) and another writer takes over.
    const log = logPathOf(sb, sessionId);
    rmSync(`${log}.lock`);
    await takeOver(sb, script, sessionId, []);

    a.stdin!.write(
      `${JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: ask.request_id, response: { behavior: 'allow' } } })}\n`,
    );
    const result = JSON.parse(await out.waitFor((l) => l.includes('"type":"result"'), 30_000)) as Record<string, unknown>;
    a.stdin!.end();
    const done = await a;
    expect(result).toMatchObject({ is_error: true, error: { code: 'session_lease_lost' } });
    expect(existsSync(marker), 'the approved command ran after the lease was lost').toBe(false);
    expect(done.exitCode).toBe(3);
    expectTakeoverLast(readLog(log));
  });
});

await describePostgres('fencing on the PostgreSQL store', () => {
  it('daemon whose connection was terminated never runs the approved tool; its clients see session_lease_lost', { timeout: 120_000 }, async () => {
    const db = await database();
    const sb = makeSandbox('fence-pg');
    const marker = join(sb.scratch, 'ran.txt');
    const script = scriptFor(sb, marker);
    const storeArgs = ['--store', db.url];
    const daemon = await startDaemon(sb, { args: ['--scripted-responses', script, '--approval-mode', 'default', ...storeArgs] });
    const client = new DaemonClient({ baseUrl: daemon.url });
    const sessionId = randomUUID();
    const session = await DaemonSessionClient.createOrAttach(client, { workspaceCwd: sb.cwd, sessionId });

    const seen: Event[] = [];
    let answered: Promise<boolean> | undefined;
    const asked = new Promise<string>((resolve) => {
      void (async () => {
        for await (const event of session.events() as AsyncIterable<Event>) {
          seen.push(event);
          if (event.type === 'permission_request') resolve(String(event.data['requestId']));
          if (event.type === 'turn_complete' || event.type === 'turn_error') break;
        }
      })();
    });
    await new Promise((r) => setTimeout(r, 100));
    await session.submitPrompt({ prompt: [{ type: 'text', text: 'run the step' }] });
    const requestId = await asked;

    // A's connection is terminated (a network cut, a failover): its advisory lock is freed.
    const killed = await adminQuery('SELECT pg_terminate_backend(backend_pid) AS ok FROM mend.leases WHERE session_id = $1', [sessionId], db.url);
    expect(killed.rows).toEqual([{ ok: true }]);
    await takeOver(sb, script, sessionId, storeArgs);

    // Now a client approves A's old request.
    answered = session.respondToSessionPermission(requestId, { outcome: { outcome: 'selected', optionId: 'proceed_once' } });
    await answered;
    for (let deadline = Date.now() + 30_000; !seen.some((e) => e.type === 'turn_complete' || e.type === 'turn_error');) {
      if (Date.now() > deadline) throw new Error(`A's turn did not end: ${JSON.stringify(seen.map((e) => e.type))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(existsSync(marker), 'the approved command ran after the lease was lost').toBe(false);
    const terminal = seen.find((e) => e.type === 'turn_complete' || e.type === 'turn_error')!;
    expect(terminal.type).toBe('turn_error');
    expect(JSON.stringify(terminal.data)).toContain('session_lease_lost');

    const exported = await mend(sb, ['sessions', 'export', sessionId, ...storeArgs]);
    const records = exported.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ChatRecord);
    expectTakeoverLast(records);
    expect((await daemon.stop()).exitCode).toBe(0);
  });
});
