/**
 * One ordered append path per session, end to end from every front end that can change
 * the approval mode or the model while a turn runs (stream-json control, the daemon,
 * ACP), on both stores. The reproduction of the forked chain: a turn with 60
 * list_directory calls while a client toggles the approval mode 50 times (and the
 * model now and then). Afterwards the session is one linear chain holding every mode
 * change and all 60 recorded results, and its plan is clean: nothing synthesized,
 * nothing dropped. (The terminal UI drives the same runtime calls; its in-process path
 * is test/runtime/append-order.e2e.test.ts.)
 */
import * as acp from '@agentclientprotocol/sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatRecord } from '../../src/session/records.js';
import { withAcp } from '../support/acp.js';
import { cleanupSandboxes, makeSandbox, mend, spawnMend, waitFor, writeScript, type Sandbox } from '../support/cli.js';
import { databasesForFile, describePostgres } from '../support/postgres.js';
import { call, startDaemon, stopAllDaemons } from '../frontends/daemon/helpers.js';

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});
const database = databasesForFile('orderfe');

const CALLS = 60;
const TOGGLES = 50;
const calls = Array.from({ length: CALLS }, (_, i) => ({ id: `call_${i}`, name: 'list_directory', args: { path: '.' } }));
const modeAt = (i: number) => (i % 2 === 0 ? 'plan' : 'default');

function script(sb: Sandbox): string {
  return writeScript(sb, [{ text: 'Listing sixty times.', toolCalls: calls }, { text: 'All listed.' }]);
}

async function expectOneChain(sb: Sandbox, sessionId: string, storeArgs: string[], modelChanges: number): Promise<void> {
  const exported = await mend(sb, ['sessions', 'export', sessionId, ...storeArgs]);
  expect(exported.exitCode, exported.stderr).toBe(0);
  const records = exported.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ChatRecord);
  const shared = new Map<string, number>();
  for (const r of records) if (r.parentUuid) shared.set(r.parentUuid, (shared.get(r.parentUuid) ?? 0) + 1);
  expect(
    [...shared].filter(([, n]) => n > 1),
    'records sharing a parent',
  ).toEqual([]);
  records.forEach((r, i) => expect(r.parentUuid, `parent of record ${i}`).toBe(i === 0 ? null : records[i - 1]!.uuid));
  const system = (subtype: string) => records.filter((r) => r.type === 'system' && r.subtype === subtype);
  expect(system('approval_mode_changed')).toHaveLength(TOGGLES);
  expect(system('model_changed')).toHaveLength(modelChanges);
  const results = records.filter((r) => r.type === 'tool_result');
  expect(results.map((r) => (r.type === 'tool_result' ? r.toolCallResult?.callId : ''))).toEqual(calls.map((c) => c.id));
  expect(results.every((r) => r.type === 'tool_result' && r.toolCallResult?.status === 'success' && r.recovery === undefined)).toBe(true);
  const plan = await mend(sb, ['plan', sessionId, '--json', ...storeArgs]);
  expect(JSON.parse(plan.stdout)).toMatchObject({ kind: 'clean', repairs: [], historyGaps: [], continuation: null });
}

const control = (id: string, request: Record<string, unknown>) => `${JSON.stringify({ type: 'control_request', request_id: id, request })}\n`;

async function viaStreamJson(storeArgs: string[]): Promise<void> {
  const sb = makeSandbox('order-sj');
  const sessionId = randomUUID();
  const sub = spawnMend(
    sb,
    ['--session-id', sessionId, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script(sb), ...storeArgs],
    {
      stdin: 'pipe',
      timeout: 120_000,
    },
  );
  let out = '';
  sub.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  sub.stdin!.write(control('init', { subtype: 'initialize' }));
  sub.stdin!.write(`${JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: 'list sixty times' }, parent_tool_use_id: null })}\n`);
  // As soon as the calls are on the wire, toggle while they run: one request per write.
  await waitFor(() => out.includes('"tool_use"'), 30_000, 'the tool calls');
  for (let i = 0; i < TOGGLES; i++) {
    sub.stdin!.write(control(`m${i}`, { subtype: 'set_permission_mode', mode: modeAt(i) }));
    if (i % 10 === 9) sub.stdin!.write(control(`model${i}`, { subtype: 'set_model', model: `scripted-${i}` }));
    await new Promise((resolve) => setImmediate(resolve));
  }
  await waitFor(() => out.includes('"type":"result"'), 60_000, 'the result');
  await waitFor(() => (out.match(/"control_response"/g) ?? []).length >= 1 + TOGGLES + 5, 30_000, 'every control answer');
  sub.stdin!.end();
  const done = await sub;
  expect(done.exitCode, String(done.stderr)).toBe(0);
  await expectOneChain(sb, sessionId, storeArgs, 5);
}

async function viaDaemon(storeArgs: string[]): Promise<void> {
  const sb = makeSandbox('order-daemon');
  const daemon = await startDaemon(sb, { args: ['--scripted-responses', script(sb), ...storeArgs] });
  const sessionId = randomUUID();
  expect((await call(daemon.url, '/session', { body: { sessionId } })).status).toBe(200);
  expect((await call(daemon.url, `/session/${sessionId}/prompt`, { body: { prompt: [{ type: 'text', text: 'list sixty times' }] } })).status).toBe(202);
  for (let i = 0; i < TOGGLES; i++) {
    expect((await call(daemon.url, `/session/${sessionId}/approval-mode`, { body: { mode: modeAt(i) } })).status).toBe(200);
    if (i % 10 === 9) expect((await call(daemon.url, `/session/${sessionId}/model`, { body: { modelId: `scripted-${i}` } })).status).toBe(200);
  }
  for (let deadline = Date.now() + 60_000; ;) {
    const context = await call<{ hasActivePrompt: boolean }>(daemon.url, `/session/${sessionId}/context`);
    if (!context.body.hasActivePrompt) break;
    if (Date.now() > deadline) throw new Error('the turn did not end');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect((await daemon.stop()).exitCode).toBe(0);
  await expectOneChain(sb, sessionId, storeArgs, 5);
}

async function viaAcp(storeArgs: string[]): Promise<void> {
  const sb = makeSandbox('order-acp');
  const run = await withAcp(sb, { args: ['--scripted-responses', script(sb), ...storeArgs] }, async (r) => {
    await r.initialize();
    const { sessionId } = await r.agent.request(acp.methods.agent.session.new, { cwd: sb.cwd, mcpServers: [] });
    const prompt = r.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'list sixty times' }] });
    await r.waitForUpdate((u) => u.sessionUpdate === 'tool_call', 30_000);
    const modes: Array<Promise<unknown>> = [];
    for (let i = 0; i < TOGGLES; i++) modes.push(r.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: modeAt(i) }));
    await Promise.all(modes);
    expect(await prompt).toMatchObject({ stopReason: 'end_turn' });
    return sessionId;
  });
  expect(run.exitCode, run.stderr).toBe(0);
  await expectOneChain(sb, run.value, storeArgs, 0);
}

describe('one ordered append path from every front end (JSONL)', () => {
  it('stream-json control: set_permission_mode x50 and set_model x5 during 60 calls', { timeout: 120_000 }, () => viaStreamJson([]));
  it('daemon: approval-mode x50 and model x5 during 60 calls', { timeout: 120_000 }, () => viaDaemon([]));
  it('ACP: session/set_mode x50 during 60 calls', { timeout: 120_000 }, () => viaAcp([]));
});

await describePostgres('one ordered append path from every front end (PostgreSQL)', () => {
  it('stream-json control: set_permission_mode x50 and set_model x5 during 60 calls', { timeout: 120_000 }, async () =>
    viaStreamJson(['--store', (await database()).url]),
  );
  it('daemon: approval-mode x50 and model x5 during 60 calls', { timeout: 120_000 }, async () => viaDaemon(['--store', (await database()).url]));
  it('ACP: session/set_mode x50 during 60 calls', { timeout: 120_000 }, async () => viaAcp(['--store', (await database()).url]));
});
