/**
 * The built `mend serve` driven by mend's own daemon-backed SDK (`connect()`):
 * the same messages as the process-backed `query()` for the same script, a
 * permission round trip through canUseTool, recovery and continueLastTurn on a
 * crashed session, interrupt, and an event stream cut mid-turn that resumes
 * with Last-Event-ID without losing or repeating a message.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, query, type SDKMessage } from '../../../src/sdk/index.js';
import { buildPlanForSession } from '../../../src/recovery/index.js';
import { loadSession } from '../../../src/session/session-loader.js';
import { LogBuilder, cleanupSandboxes, logPathOf, makeSandbox, readLog, writeScript, type Sandbox } from '../../support/cli.js';
import { markerLines, startDaemon, stopAllDaemons, type Daemon } from './helpers.js';

let sb: Sandbox;
let daemon: Daemon;
let marker: string;
let script: string;

beforeAll(async () => {
  sb = makeSandbox('daemon-sdk');
  marker = join(sb.scratch, 'ran.txt');
  script = writeScript(sb, [
    { text: 'I will run the step.', toolCalls: [{ id: 'call_step', name: 'run_shell_command', args: { command: `echo ran >> '${marker}'` } }] },
    { text: 'Done with the step.' },
  ]);
  daemon = await startDaemon(sb, { args: ['--scripted-responses', script] });
});

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

async function collect(q: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const out: SDKMessage[] = [];
  for await (const m of q) out.push(m);
  return out;
}

/** What stays the same between two runs of one script: types, subtypes and content, without ids, times and usage. */
function shape(messages: SDKMessage[]): unknown[] {
  return messages.map((m) => {
    const record = m as Record<string, unknown>;
    switch (m.type) {
      case 'system':
        return {
          type: 'system',
          subtype: record['subtype'],
          resumed: record['resumed'],
          tools: record['tools'],
          model: record['model'],
          permission_mode: record['permission_mode'],
        };
      case 'assistant':
      case 'user':
        return { type: m.type, content: (record['message'] as { content: unknown }).content };
      case 'result':
        return { type: 'result', subtype: record['subtype'], is_error: record['is_error'], result: record['result'], num_turns: record['num_turns'] };
      // Partial events are not asked for by these runs: only their type would be compared.
      case 'stream_event':
        return { type: m.type };
    }
  });
}

function crashedSession(sessionId: string): string {
  return new LogBuilder(sessionId, { cwd: sb.cwd })
    .user('run the step')
    .assistant([{ text: 'Running it.' }, { functionCall: { id: 'call_x', name: 'run_shell_command', args: { command: `echo x >> '${marker}'` } } }])
    .write(logPathOf(sb, sessionId));
}

describe("mend's daemon-backed SDK against the built mend serve", { timeout: 60_000 }, () => {
  it('create + prompt with a canUseTool round trip yields the same messages as the process-backed query()', async () => {
    const asked: string[] = [];
    const canUseTool = async (name: string) => {
      asked.push(name);
      return { behavior: 'allow' as const };
    };
    const client = connect({ url: daemon.url });
    const viaDaemon = await collect(client.query({ prompt: 'run the step', options: { canUseTool } }));

    const viaProcess = await collect(
      query({
        prompt: 'run the step',
        options: { cwd: sb.cwd, provider: 'scripted', scriptedResponses: script, canUseTool, env: { MEND_HOME: join(sb.root, 'other-home'), HOME: sb.root } },
      }),
    );
    expect(asked).toEqual(['run_shell_command', 'run_shell_command']);
    expect(markerLines(marker)).toEqual(['ran', 'ran']);
    expect(viaDaemon.map((m) => m.type)).toEqual(['system', 'assistant', 'user', 'assistant', 'result']);
    expect(shape(viaDaemon)).toEqual(shape(viaProcess));
  });

  it('resume of a crashed session: recovery equals the core plan; continueLastTurn({planId}) runs no tool; stale ids are refused', async () => {
    const sessionId = randomUUID();
    const path = crashedSession(sessionId);
    const plan = buildPlanForSession(await loadSession(path));
    const before = markerLines(marker).length;
    const client = connect({ url: daemon.url });
    const q = client.query({ options: { resume: sessionId } });
    const seen: SDKMessage[] = [];
    let refusal: unknown;
    let accepted: unknown;
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'system' && m.subtype === 'recovery') {
        expect(m).toMatchObject({ plan_id: plan.planId, kind: 'interrupted_turn', cause: 'crash', can_continue: true, action: 'awaiting_confirmation' });
        refusal = await q.continueLastTurn({ planId: 'rp_ffffffffffffffff' });
        expect(await q.getRecoveryPlan()).toMatchObject({ plan_id: plan.planId, previous_attempts: 0 });
        accepted = await q.continueLastTurn({ planId: m.plan_id });
      }
      if (m.type === 'result') break;
    }
    expect(refusal).toMatchObject({ accepted: false, code: 'stale_plan', plan_id: plan.planId, kind: 'interrupted_turn' });
    expect(accepted).toMatchObject({ accepted: true, plan_id: plan.planId, kind: 'interrupted_turn', interruption: 'interrupted_turn' });
    expect(await q.recovery).toMatchObject({ plan_id: plan.planId });
    // The synthetic result that closes the interrupted call is shown as a tool result (a user line).
    expect(seen.map((m) => m.type)).toEqual(['system', 'system', 'user', 'assistant', 'result']);
    expect(seen.at(-1)).toMatchObject({ subtype: 'success', result: 'Done with the step.' });
    expect(markerLines(marker)).toHaveLength(before);
    expect(readLog(path).filter((r) => r.type === 'tool_result')).toHaveLength(1);
    expect(await client.closeSession(sessionId)).toBe(true);
    expect(await client.closeSession(sessionId)).toBe(false);
  });

  it('interrupt() stops the running turn: the result is an aborted error and the log records the abort', async () => {
    const sb2 = makeSandbox('daemon-sdk-interrupt');
    const slow = writeScript(sb2, [{ text: 'thinking for a long while', stallMs: 'forever' }]);
    const d = await startDaemon(sb2, { args: ['--scripted-responses', slow] });
    const client = connect({ url: d.url });
    const q = client.query({ prompt: 'take your time' });
    const seen: SDKMessage[] = [];
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'system') setTimeout(() => void q.interrupt(), 300);
    }
    expect(seen.at(-1)).toMatchObject({ type: 'result', is_error: true, error: { code: 'aborted' } });
    const sessionId = seen[0]!.session_id;
    expect(readLog(join(sb2.chats, `${sessionId}.jsonl`)).at(-1)).toMatchObject({
      type: 'system',
      subtype: 'turn_aborted',
      systemPayload: { reason: 'interrupt' },
    });
    expect((await d.stop()).exitCode).toBe(0);
  });

  it('an event stream cut mid-turn is resumed with Last-Event-ID: every message arrives once', async () => {
    const lastEventIds: string[] = [];
    let cut = false;
    // The first event stream breaks after its third frame; the SDK must reconnect from the last id it saw.
    const flaky: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = String(input);
      if (!url.endsWith('/events')) return response;
      lastEventIds.push(new Headers(init?.headers).get('last-event-id') ?? '');
      if (cut || !response.body) return response;
      cut = true;
      const reader = response.body.getReader();
      let frames = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          frames += new TextDecoder().decode(value).split('\nid: ').length - 1;
          if (frames >= 3) {
            await reader.cancel();
            controller.error(new Error('connection reset (test)'));
          }
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const allow = async () => ({ behavior: 'allow' as const });
    const messages = await collect(connect({ url: daemon.url, fetch: flaky }).query({ prompt: 'run the step', options: { canUseTool: allow } }));
    expect(messages.map((m) => m.type)).toEqual(['system', 'assistant', 'user', 'assistant', 'result']);
    expect(new Set(messages.map((m) => (m as { uuid: string }).uuid)).size).toBe(messages.length);
    expect(lastEventIds.length).toBeGreaterThanOrEqual(2);
    expect(lastEventIds[0]).toBe('0');
    expect(Number(lastEventIds[1])).toBeGreaterThanOrEqual(3);
  });

  it('a prompt the daemon refuses ends in one error result; a closed session ends the messages with an error', async () => {
    const client = connect({ url: daemon.url });
    const sessionId = randomUUID();
    const q = client.query({ prompt: '   ', options: { sessionId } });
    const messages = await collect(q);
    expect(messages.at(-1)).toMatchObject({ type: 'result', is_error: true, error: { code: 'invalid_request' } });

    const open = client.query({ options: { resume: sessionId } });
    const first = await open.next();
    expect(first.value).toMatchObject({ type: 'system', subtype: 'init', session_id: sessionId });
    await client.closeSession(sessionId);
    // session_closed when the event stream was already connected; the stream's 404 when it was not yet.
    const error = (await collect(open).catch((e: unknown) => e)) as { code?: string };
    expect(['session_closed', 'session_not_found']).toContain(error.code);
  });
});
