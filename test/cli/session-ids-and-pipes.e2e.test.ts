/**
 * Small faults of the session commands, end to end on the built CLI: a session id is
 * one session whatever its case (import refuses the upper-case spelling of an existing
 * session on both stores, ACP session/load accepts it), `sessions import -` reads stdin,
 * and `sessions list` into a closed pipe exits 141 like every other command.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { withAcp } from '../support/acp.js';
import { cleanupSandboxes, makeSandbox, mend, spawnMend, finished, writeScript, type Sandbox } from '../support/cli.js';
import { databasesForFile, describePostgres } from '../support/postgres.js';

afterAll(() => cleanupSandboxes());
const database = databasesForFile('ids');

async function oneSession(sb: Sandbox, storeArgs: string[]): Promise<{ sessionId: string; exported: string }> {
  const script = writeScript(sb, [{ text: 'hello' }]);
  const run = await mend(sb, ['--scripted-responses', script, '-p', 'hi', '-o', 'json', ...storeArgs]);
  expect(run.exitCode, run.stderr).toBe(0);
  const sessionId = (JSON.parse(run.stdout) as { session_id: string }).session_id;
  const exported = await mend(sb, ['sessions', 'export', sessionId, ...storeArgs]);
  expect(exported.exitCode, exported.stderr).toBe(0);
  return { sessionId, exported: exported.stdout };
}

async function importUpperCaseTwin(sb: Sandbox, storeArgs: string[]): Promise<void> {
  const { sessionId, exported } = await oneSession(sb, storeArgs);
  const upper = sessionId.toUpperCase();
  const twin = exported.split(sessionId).join(upper);
  const imported = await mend(sb, ['sessions', 'import', '-', ...storeArgs], { input: twin });
  expect(imported.exitCode, imported.stderr).toBe(3);
  expect(imported.stderr).toContain('[session_exists]');
  const listed = await mend(sb, ['sessions', 'list', '--json', ...storeArgs]);
  const ids = (JSON.parse(listed.stdout) as Array<{ id: string }>).map((r) => r.id);
  expect(ids).toEqual([sessionId]);
  // --resume with the upper-case spelling finds the one session.
  const inspected = await mend(sb, ['--resume', upper, '-o', 'json', ...storeArgs]);
  expect(inspected.exitCode, inspected.stderr).toBe(0);
}

describe('one canonical session id', () => {
  it('JSONL: importing the upper-case spelling of an existing session is session_exists; no second file', { timeout: 60_000 }, async () => {
    const sb = makeSandbox('ids-jsonl');
    await importUpperCaseTwin(sb, []);
    expect(readdirSync(sb.chats).filter((n) => n.endsWith('.jsonl'))).toHaveLength(1);
  });

  it('an upper-case session imported into an empty store is kept under its lower-case id', { timeout: 60_000 }, async () => {
    const sb = makeSandbox('ids-fresh');
    const { sessionId, exported } = await oneSession(sb, []);
    const other = makeSandbox('ids-fresh2');
    const imported = await mend(other, ['sessions', 'import', '-'], { input: exported.split(sessionId).join(sessionId.toUpperCase()) });
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ sessionId });
    expect(readdirSync(other.chats)).toEqual([`${sessionId}.jsonl`]);
    expect(readFileSync(`${other.chats}/${sessionId}.jsonl`, 'utf8')).toBe(exported);
  });

  it('ACP session/load accepts the upper-case spelling, as the daemon does', { timeout: 60_000 }, async () => {
    const sb = makeSandbox('ids-acp');
    const { sessionId } = await oneSession(sb, []);
    const run = await withAcp(sb, {}, async (r) => {
      await r.initialize();
      const loaded = await r.agent.request(acp.methods.agent.session.load, { sessionId: sessionId.toUpperCase(), cwd: sb.cwd, mcpServers: [] });
      return { loaded, updates: r.updatesOf(sessionId) };
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect((run.value.loaded._meta as { mend: { recovery: { recoveryKind: string } } }).mend.recovery.recoveryKind).toBe('clean');
    expect(run.value.updates.some((u) => u.sessionUpdate === 'user_message_chunk')).toBe(true);
  });
});

describe('sessions import - and a closed pipe', () => {
  it('`mend sessions import -` reads stdin', { timeout: 60_000 }, async () => {
    const sb = makeSandbox('import-dash');
    const { sessionId, exported } = await oneSession(sb, []);
    const other = makeSandbox('import-dash2');
    const imported = await mend(other, ['sessions', 'import', '-'], { input: exported });
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ sessionId, records: 2 });
  });

  it('`mend sessions list` whose reader went away exits 141', { timeout: 60_000 }, async () => {
    const sb = makeSandbox('list-pipe');
    await oneSession(sb, []);
    const sub = spawnMend(sb, ['sessions', 'list']);
    // The reader is gone before mend writes: every write gets EPIPE, as under `| head -1` once head exited.
    sub.stdout!.destroy();
    const run = await finished(sub);
    expect(run.exitCode, run.stderr).toBe(141);
  });
});

await describePostgres('one canonical session id on PostgreSQL', () => {
  it('importing the upper-case spelling of an existing session is session_exists', { timeout: 90_000 }, async () => {
    const db = await database();
    const sb = makeSandbox('ids-pg');
    await importUpperCaseTwin(sb, ['--store', db.url]);
  });
});
