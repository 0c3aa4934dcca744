/**
 * The built `mend serve` driven by the real, unchanged `DaemonClient` of
 * `@qwen-code/sdk` 0.1.14: create, a prompt with a permission round trip, SSE
 * resume with Last-Event-ID, two clients on one session, load with replay and
 * recovery, continue on an interrupted tool turn, and the refusal of a second
 * blind continue after a failed one.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DaemonClient, DaemonSessionClient } from '@qwen-code/sdk/daemon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../../src/recovery/index.js';
import { loadSession } from '../../../src/session/session-loader.js';
import { LogBuilder, cleanupSandboxes, logPathOf, makeSandbox, readLog, writeScript, type Sandbox } from '../../support/cli.js';
import { call, markerLines, startDaemon, stopAllDaemons, type Daemon } from './helpers.js';

type Event = { id?: number; type: string; data: Record<string, unknown>; promptId?: string };

let sb: Sandbox;
let daemon: Daemon;
let client: DaemonClient;
let marker: string;

beforeAll(async () => {
  sb = makeSandbox('daemon-qwen');
  marker = join(sb.scratch, 'ran.txt');
  // Response 0 answers a fresh prompt (a tool call that needs approval); response 1 a session whose history holds one model entry.
  const script = writeScript(sb, [
    { text: 'I will run the step.', toolCalls: [{ id: 'call_step', name: 'run_shell_command', args: { command: `echo ran >> '${marker}'` } }] },
    { text: 'Done with the step.' },
  ]);
  daemon = await startDaemon(sb, { args: ['--scripted-responses', script] });
  client = new DaemonClient({ baseUrl: daemon.url });
});

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

/** Reads a session's events until `until` says stop. */
async function readEvents(events: AsyncIterable<Event>, until: (e: Event, all: Event[]) => boolean | Promise<boolean>): Promise<Event[]> {
  const seen: Event[] = [];
  for await (const event of events) {
    seen.push(event);
    if (await until(event, seen)) break;
  }
  return seen;
}

/** An interrupted tool turn written as mend would leave it after a crash: `models` complete exchanges, then a dangling pair of calls. */
function crashedSession(sessionId: string, models: number): string {
  const log = new LogBuilder(sessionId, { cwd: sb.cwd });
  for (let i = 1; i < models; i++) log.user(`question ${i}`).assistant([{ text: `answer ${i}` }]);
  log
    .user('run both steps')
    .assistant([
      { text: 'Running both.' },
      { functionCall: { id: 'call_a', name: 'run_shell_command', args: { command: `echo a >> '${marker}'` } } },
      { functionCall: { id: 'call_b', name: 'run_shell_command', args: { command: `echo b >> '${marker}'` } } },
    ]);
  return log.write(logPathOf(sb, sessionId));
}

describe('mend serve with the real @qwen-code/sdk DaemonClient', { timeout: 60_000 }, () => {
  it('advertises what the client checks: v1, session_id_override, the rest transport, a restore limit', async () => {
    expect(await client.health()).toEqual({ status: 'ok' });
    const caps = await client.capabilities();
    expect(caps.v).toBe(1);
    expect(caps.features).toContain('session_id_override');
    expect(caps.transports).toEqual(['rest']);
    expect(caps.limits?.sessionRestoreTimeoutMs).toBeGreaterThan(0);
  });

  it('create, prompt with a permission round trip (first answer wins), then SSE resume with Last-Event-ID', async () => {
    const sessionId = randomUUID();
    const session = await DaemonSessionClient.createOrAttach(client, { workspaceCwd: sb.cwd, sessionId: sessionId.toUpperCase() });
    expect(session.sessionId).toBe(sessionId);
    expect(session.attached).toBe(false);
    expect(typeof session.clientId).toBe('string');

    const answers: boolean[] = [];
    const reading = readEvents(session.events() as AsyncIterable<Event>, async (e) => {
      if (e.type === 'permission_request') {
        const requestId = String(e.data['requestId']);
        answers.push(await session.respondToSessionPermission(requestId, { outcome: { outcome: 'selected', optionId: 'proceed_once' } }));
        answers.push(await session.respondToSessionPermission(requestId, { outcome: { outcome: 'selected', optionId: 'cancel' } }));
      }
      return e.type === 'turn_complete' || e.type === 'turn_error';
    });
    await new Promise((r) => setTimeout(r, 100));
    const accepted = await session.submitPrompt({ prompt: [{ type: 'text', text: 'run the step' }] });
    const events = await reading;

    expect(answers).toEqual([true, false]);
    expect(markerLines(marker)).toEqual(['ran']);
    const types = events.filter((e) => e.id !== undefined).map((e) => e.type);
    expect(types).toContain('permission_request');
    expect(types.indexOf('permission_resolved')).toBeGreaterThan(types.indexOf('permission_request'));
    const terminal = events.at(-1)!;
    expect(terminal).toMatchObject({ type: 'turn_complete', data: { sessionId, stopReason: 'end_turn', promptId: accepted.promptId } });
    const ids = events.flatMap((e) => (e.id === undefined ? [] : [e.id]));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    const updates = events.filter((e) => e.type === 'session_update').map((e) => (e.data['update'] as { sessionUpdate: string }).sessionUpdate);
    expect(updates).toEqual(expect.arrayContaining(['user_message_chunk', 'agent_message_chunk', 'tool_call', 'tool_call_update']));

    // Resume: everything after id 3, then replay_complete, nothing twice.
    const resumed = await readEvents(
      client.subscribeEvents(sessionId, { lastEventId: 3, epoch: session.eventEpoch }) as AsyncIterable<Event>,
      (e) => e.type === 'replay_complete',
    );
    expect(resumed.filter((e) => e.id !== undefined).map((e) => e.id)).toEqual(ids.filter((id) => id > 3));
    expect(resumed.at(-1)?.data).toEqual({ replayedCount: ids.length - 3, lastReplayedEventId: ids.at(-1) });

    const context = (await session.context()) as unknown as { recovery: Record<string, unknown> };
    expect(context.recovery).toMatchObject({ kind: 'clean', canContinue: false, recovered: false });
    const listed = await client.listWorkspaceSessions(sb.cwd);
    expect(listed.find((s) => s.sessionId === sessionId)).toMatchObject({ recoveryKind: 'clean', hasActivePrompt: false });
    await session.close();
    await expect(session.close()).resolves.toBeUndefined();
    expect((await call(daemon.url, `/session/${sessionId}/context`)).status).toBe(404);
  });

  it('two clients attached to one session see the same events; either may answer the permission', async () => {
    const sessionId = randomUUID();
    const first = await DaemonSessionClient.createOrAttach(client, { workspaceCwd: sb.cwd, sessionId });
    const second = await DaemonSessionClient.createOrAttach(client, { workspaceCwd: sb.cwd, sessionId });
    expect(second.attached).toBe(true);
    expect(second.clientId).not.toBe(first.clientId);
    const done = (e: Event) => e.type === 'turn_complete' || e.type === 'turn_error';
    const a = readEvents(first.subscribeEvents({ lastEventId: 0 }) as AsyncIterable<Event>, done);
    const b = readEvents(second.subscribeEvents({ lastEventId: 0 }) as AsyncIterable<Event>, async (e) => {
      if (e.type === 'permission_request')
        await second.respondToSessionPermission(String(e.data['requestId']), { outcome: { outcome: 'selected', optionId: 'cancel' } });
      return done(e);
    });
    await new Promise((r) => setTimeout(r, 100));
    const before = markerLines(marker).length;
    await first.submitPrompt({ prompt: [{ type: 'text', text: 'run it again' }] });
    const [seenA, seenB] = await Promise.all([a, b]);
    const journal = (events: Event[]) => events.filter((e) => e.id !== undefined).map((e) => `${e.id}:${e.type}`);
    expect(journal(seenA)).toEqual(journal(seenB));
    expect(seenA.find((e) => e.type === 'permission_resolved')?.data['outcome']).toEqual({ outcome: 'selected', optionId: 'cancel' });
    // Denied by the second client: the tool did not run.
    expect(markerLines(marker)).toHaveLength(before);
    await first.close();
  });

  it('load: compacted replay and the core plan as camelCase recovery at state._meta.mend.recovery, top level and in context', async () => {
    const sessionId = randomUUID();
    const path = crashedSession(sessionId, 1);
    const plan = buildPlanForSession(await loadSession(path));
    const session = await DaemonSessionClient.load(client, sessionId, { workspaceCwd: sb.cwd });
    const meta = (session.state as { _meta: { mend: { recovery: Record<string, unknown> } } })._meta.mend.recovery;
    expect(meta).toMatchObject({
      planId: plan.planId,
      kind: 'interrupted_turn',
      recoveryKind: 'interrupted_turn',
      cause: 'crash',
      canContinue: true,
      recovered: true,
    });
    expect(meta['repairs']).toEqual([{ type: 'synthesized_tool_result', count: 2 }]);
    const context = (await session.context()) as unknown as { recovery: unknown };
    expect(context.recovery).toEqual(meta);
    expect((await call(daemon.url, `/session/${sessionId}/recovery`)).body).toEqual(meta);

    const { compactedReplay, liveJournal } = session.consumeReplaySnapshot();
    expect(liveJournal).toEqual([]);
    const kinds = compactedReplay.map((e) => (e.data as { update: { sessionUpdate: string; status?: string } }).update);
    // The replay ACP gives (one mapping): each unfinished call once, failed, its outcome unknown.
    expect(kinds.map((u) => u.sessionUpdate)).toEqual(['user_message_chunk', 'agent_message_chunk', 'tool_call', 'tool_call']);
    expect(kinds.filter((u) => u.sessionUpdate === 'tool_call').map((u) => u.status)).toEqual(['failed', 'failed']);
    await session.close();
  });

  it('continue on an interrupted tool turn: each call id answered once, no tool runs; the outcome follows on SSE', async () => {
    const sessionId = randomUUID();
    const path = crashedSession(sessionId, 1);
    const before = markerLines(marker).length;
    const session = await DaemonSessionClient.load(client, sessionId, { workspaceCwd: sb.cwd });
    const reading = readEvents(session.events() as AsyncIterable<Event>, (e) => e.type === 'turn_complete' || e.type === 'turn_error');
    await new Promise((r) => setTimeout(r, 100));
    const answer = (await session.continueSession()) as unknown as Record<string, unknown>;
    expect(answer).toMatchObject({ accepted: true, interruption: 'interrupted_turn', kind: 'interrupted_turn', previousAttempts: 0 });
    const events = await reading;
    expect(events.at(-1)).toMatchObject({ type: 'turn_complete', data: { stopReason: 'end_turn', promptId: answer['promptId'] } });
    const closed = events
      .filter((e) => e.type === 'session_update')
      .map((e) => e.data['update'] as { sessionUpdate: string; toolCallId?: string; status?: string })
      .filter((u) => u.sessionUpdate === 'tool_call_update');
    expect(closed.map((u) => `${u.toolCallId}:${u.status}`)).toEqual(['call_a:failed', 'call_b:failed']);
    expect(markerLines(marker)).toHaveLength(before);

    const records = readLog(path);
    const responses = records.flatMap((r) => (r.type === 'tool_result' ? r.message.parts.map((p) => p.functionResponse?.id) : []));
    expect(responses).toEqual(['call_a', 'call_b']);
    expect(records.at(-1)).toMatchObject({ type: 'assistant', message: { parts: [{ text: 'Done with the step.' }] } });
    const context = (await session.context()) as unknown as { recovery: Record<string, unknown> };
    expect(context.recovery).toMatchObject({ kind: 'clean', canContinue: false });
    await session.close();
  });

  it('after a failed continuation a second continue without planId is refused; naming the plan is allowed and counted', async () => {
    const sessionId = randomUUID();
    // Two model entries: the continuation asks for response 2, which the script does not have, so it fails.
    crashedSession(sessionId, 2);
    const session = await DaemonSessionClient.load(client, sessionId, { workspaceCwd: sb.cwd });
    const reading = readEvents(session.events() as AsyncIterable<Event>, (e) => e.type === 'turn_complete' || e.type === 'turn_error');
    await new Promise((r) => setTimeout(r, 100));
    const first = (await session.continueSession()) as unknown as Record<string, unknown>;
    expect(first).toMatchObject({ accepted: true, previousAttempts: 0 });
    const events = await reading;
    expect(events.at(-1)).toMatchObject({ type: 'turn_error', data: { code: 'script_exhausted', promptId: first['promptId'] } });

    const second = (await session.continueSession()) as unknown as Record<string, unknown>;
    // The failed attempt wrote the synthetic results: the tail is now a tool-result submission with no answer.
    expect(second).toMatchObject({ accepted: false, code: 'continuation_refused', interruption: 'interrupted_prompt', kind: 'interrupted_prompt' });
    expect(String(second['message'])).toContain(String(second['planId']));
    const context = (await session.context()) as unknown as { recovery: Record<string, unknown> };
    expect(context.recovery).toMatchObject({ previousAttempts: 1, canContinue: true, planId: second['planId'] });

    // A stale plan id is refused; the current one is an explicit confirmation.
    expect((await call(daemon.url, `/session/${sessionId}/continue`, { body: { planId: 'rp_0000000000000000' } })).body).toMatchObject({
      accepted: false,
      code: 'stale_plan',
    });
    const explicit = await call(daemon.url, `/session/${sessionId}/continue`, { body: { planId: second['planId'] } });
    expect(explicit.body).toMatchObject({ accepted: true, planId: second['planId'], previousAttempts: 1 });
    await session.close();
  });

  it('a client id this daemon never issued is refused, and the client heals itself by resuming', async () => {
    const sessionId = randomUUID();
    const session = await DaemonSessionClient.createOrAttach(client, { workspaceCwd: sb.cwd, sessionId });
    const stale = await call(daemon.url, `/session/${sessionId}/continue`, { method: 'POST', headers: { 'X-Qwen-Client-Id': 'not-a-client' } });
    expect(stale.status).toBe(400);
    expect(stale.body).toMatchObject({ code: 'invalid_client_id' });
    // A session client holding an id from an earlier daemon: its continue gets 400, it resumes, adopts the new id, retries once.
    const healed = new DaemonSessionClient({
      client,
      session: { sessionId, workspaceCwd: sb.cwd, attached: true, clientId: 'from-an-earlier-daemon' },
    } as never);
    expect(await healed.continueSession()).toMatchObject({ accepted: false, code: 'nothing_to_continue' });
    expect(healed.clientId).not.toBe('from-an-earlier-daemon');
    expect(await session.heartbeat()).toMatchObject({ sessionId, clientId: session.clientId });
    await session.setModel('scripted');
    expect(await client.setSessionApprovalMode(sessionId, 'auto-edit', { clientId: session.clientId })).toMatchObject({
      mode: 'auto-edit',
      previous: 'default',
    });
    await session.close();
  });
});
