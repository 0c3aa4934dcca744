/**
 * `mend --acp` end to end, driven over stdio by the ACP SDK's own client: a new
 * session with tools and permission round trips, cancelling mid-tool, continuing
 * an interrupted tool turn (`_mend/session/continue`, `/continue`, auto-continue),
 * stale plans, and a session another process holds.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatRecord } from '../../../src/session/records.js';
import { AcpContinueAnswerSchema, AcpTurnMetaSchema } from '../../../src/wire/acp-extensions.js';
import { RecoverySummaryCamelSchema } from '../../../src/wire/recovery-summary.js';
import { allow, withAcp, wireUpdates, type AcpRun } from '../../support/acp.js';
import { copyCase, listCorpus } from '../../support/corpus.js';
import {
  LogBuilder,
  cleanupSandboxes,
  logPathOf,
  makeSandbox,
  mend,
  trackTempDir,
  readLog,
  sessionFiles,
  spawnMend,
  waitFor,
  watchStdout,
  writeScript,
  type Sandbox,
} from '../../support/cli.js';

afterAll(cleanupSandboxes);

const m = acp.methods.agent;
const SESSION = '11111111-2222-4333-8444-555555555555';

function agentText(updates: readonly acp.SessionUpdate[]): string {
  return updates.flatMap((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [])).join('');
}

function toolResults(records: ChatRecord[], callId: string): ChatRecord[] {
  return records.filter((r) => r.type === 'tool_result' && r.message.parts.some((p) => p.functionResponse?.id === callId));
}

/** A session that crashed while `touch <marker>` ran: the call is recorded, its result is not. */
function crashedToolTurn(sb: Sandbox, marker: string, opts: { aborted?: boolean } = {}): string {
  const log = new LogBuilder(SESSION, { cwd: sb.cwd })
    .user('create the marker')
    .assistant([{ text: 'Creating it.' }, { functionCall: { id: 'call_1', name: 'run_shell_command', args: { command: `touch ${marker}` } } }]);
  if (opts.aborted) log.system('turn_aborted', { reason: 'sigint' });
  return log.write(logPathOf(sb, SESSION));
}

/** The script of that session: response 0 made the call; response 1 is what a continuation gets. */
function continuationScript(sb: Sandbox, marker: string): string {
  return writeScript(sb, [
    { toolCalls: [{ id: 'call_1', name: 'run_shell_command', args: { command: `touch ${marker}` } }] },
    { text: 'The command may or may not have run; I will check before running it again.' },
  ]);
}

async function load(r: AcpRun, sb: Sandbox, sessionId = SESSION, meta?: Record<string, unknown>) {
  const answer = await r.agent.request(m.session.load, { sessionId, cwd: sb.cwd, mcpServers: [], ...(meta ? { _meta: meta } : {}) });
  return { answer, recovery: RecoverySummaryCamelSchema.parse((answer._meta as { mend: { recovery: unknown } }).mend.recovery) };
}

describe.concurrent('mend --acp', { timeout: 60_000 }, () => {
  it('initialize advertises load, resume, list, close, images and the mend extensions', async () => {
    const sb = makeSandbox('acp-init');
    const run = await withAcp(sb, {}, (r) => r.initialize());
    expect(run.exitCode).toBe(0);
    const caps = run.value.agentCapabilities!;
    expect(caps.loadSession).toBe(true);
    expect(caps.sessionCapabilities).toMatchObject({ list: {}, resume: {}, close: {} });
    expect(caps.promptCapabilities?.image).toBe(true);
    expect(caps._meta).toMatchObject({ mend: { methods: ['_mend/session/recovery', '_mend/session/continue'], commands: ['/continue', '/plan'] } });
  });

  it('a new session: a prompt with tools, permission round trips (allow always, reject), and the log', async () => {
    const sb = makeSandbox('acp-new');
    const a = join(sb.cwd, 'a.txt');
    const b = join(sb.cwd, 'b.txt');
    const marker = join(sb.scratch, 'marker');
    const script = writeScript(sb, [
      { text: 'Writing a.', toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: a, content: 'A' } }] },
      { thought: 'now b', toolCalls: [{ id: 'w2', name: 'write_file', args: { file_path: b, content: 'B' } }] },
      { text: 'Both written.' },
      { toolCalls: [{ id: 's1', name: 'run_shell_command', args: { command: `touch ${marker}` } }] },
      { text: 'You said no.' },
    ]);
    const answers = ['allow_always', 'reject_once'];
    const run = await withAcp(sb, { args: ['--scripted-responses', script], permission: () => allow(answers.shift()) }, async (r) => {
      await r.initialize();
      const created = await r.agent.request(m.session.new, { cwd: sb.cwd, mcpServers: [] });
      const first = await r.agent.request(m.session.prompt, { sessionId: created.sessionId, prompt: [{ type: 'text', text: 'write a and b' }] });
      const afterFirst = r.updatesOf(created.sessionId);
      const second = await r.agent.request(m.session.prompt, { sessionId: created.sessionId, prompt: [{ type: 'text', text: 'touch the marker' }] });
      const recovery = await r.agent.request('_mend/session/recovery', { sessionId: created.sessionId });
      return { created, first, afterFirst, second, all: r.updatesOf(created.sessionId), permissions: [...r.permissions], recovery };
    });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const { created, first, afterFirst, second, all, permissions, recovery } = run.value;
    expect(created.modes?.availableModes.map((mode) => mode.id)).toEqual(['default', 'auto-edit', 'yolo', 'plan']);

    // Turn 1: one question for w1 answered "always"; w2 (same tool) runs without asking.
    expect(first.stopReason).toBe('end_turn');
    expect(readFileSync(a, 'utf8')).toBe('A');
    expect(readFileSync(b, 'utf8')).toBe('B');
    expect(permissions[0]).toMatchObject({ sessionId: created.sessionId, toolCall: { toolCallId: 'w1', status: 'pending', kind: 'edit' } });
    expect(permissions[0]!.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once', 'reject_always']);
    const kinds = afterFirst.map((u) => u.sessionUpdate);
    expect(kinds).toContain('agent_thought_chunk');
    expect(afterFirst.filter((u) => u.sessionUpdate === 'tool_call').map((u) => (u as { toolCallId: string }).toolCallId)).toEqual(['w1', 'w2']);
    const finals = afterFirst.filter((u) => u.sessionUpdate === 'tool_call_update' && u.status !== 'in_progress');
    expect(finals.map((u) => [(u as { toolCallId: string }).toolCallId, (u as { status: string }).status])).toEqual([
      ['w1', 'completed'],
      ['w2', 'completed'],
    ]);
    expect(agentText(afterFirst)).toBe('Writing a.Both written.');

    // Turn 2: the shell command is asked about and rejected: it never runs, and the denial is reported.
    expect(permissions).toHaveLength(2);
    expect(permissions[1]!.toolCall.toolCallId).toBe('s1');
    expect(second.stopReason).toBe('end_turn');
    expect(existsSync(marker)).toBe(false);
    const meta = AcpTurnMetaSchema.parse((second._meta as { mend: unknown }).mend);
    expect(meta.permissionDenials).toEqual([{ toolName: 'run_shell_command', toolUseId: 's1', toolInput: { command: `touch ${marker}` } }]);
    expect(all.some((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 's1' && u.status === 'failed')).toBe(true);
    expect(all.some((u) => u.sessionUpdate === 'available_commands_update')).toBe(true);

    // The log is the session's; the plan says it is clean.
    const records = readLog(logPathOf(sb, created.sessionId));
    expect(toolResults(records, 's1')).toHaveLength(1);
    expect(RecoverySummaryCamelSchema.parse(recovery)).toMatchObject({ kind: 'clean', canContinue: false });
  });

  it('session/cancel mid-tool kills the tool, answers cancelled and records the abort', async () => {
    const sb = makeSandbox('acp-cancel');
    const marker = join(sb.scratch, 'marker');
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'slow', name: 'run_shell_command', args: { command: `sleep 1.5; touch ${marker}` } }] },
      { text: 'never' },
    ]);
    const run = await withAcp(sb, { args: ['--scripted-responses', script] }, async (r) => {
      await r.initialize();
      const { sessionId } = await r.agent.request(m.session.new, { cwd: sb.cwd, mcpServers: [] });
      await r.agent.request(m.session.setMode, { sessionId, modeId: 'yolo' });
      const turn = r.agent.request(m.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
      await r.waitForUpdate((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'slow' && u.status === 'in_progress');
      await r.agent.notify(m.session.cancel, { sessionId });
      const answer = await turn;
      return { sessionId, answer, updates: r.updatesOf(sessionId) };
    });
    expect(run.exitCode).toBe(0);
    const { sessionId, answer, updates } = run.value;
    expect(answer.stopReason).toBe('cancelled');
    expect(updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'failed').map((u) => (u as { toolCallId: string }).toolCallId)).toEqual(
      ['slow'],
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(existsSync(marker)).toBe(false);
    const records = readLog(logPathOf(sb, sessionId));
    const slow = toolResults(records, 'slow');
    expect(slow).toHaveLength(1);
    expect((slow[0] as { toolCallResult?: { status: string } }).toolCallResult?.status).toBe('cancelled');
    expect(records.at(-1)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'interrupt' } });
  });

  it('each session works in the project of its own cwd: its log, its tool boundary', async () => {
    const sb = makeSandbox('acp-cwd');
    const other = join(sb.root, 'other-project');
    mkdirSync(other);
    const inside = join(other, 'in.txt');
    const outside = join(sb.cwd, 'out.txt');
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'in', name: 'write_file', args: { file_path: inside, content: 'in' } }] },
      { toolCalls: [{ id: 'out', name: 'write_file', args: { file_path: outside, content: 'out' } }] },
      { text: 'done' },
    ]);
    const run = await withAcp(sb, { args: ['--approval-mode', 'yolo', '--scripted-responses', script] }, async (r) => {
      await r.initialize();
      const { sessionId } = await r.agent.request(m.session.new, { cwd: other, mcpServers: [] });
      await r.agent.request(m.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write both' }] });
      return { sessionId, updates: r.updatesOf(sessionId) };
    });
    const status = (id: string) =>
      run.value.updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === id).map((u) => (u as { status: string }).status);
    expect(status('in')).toContain('completed');
    expect(status('out')).toContain('failed');
    expect(readFileSync(inside, 'utf8')).toBe('in');
    expect(existsSync(outside)).toBe(false);
    const chats = join(sb.home, 'projects', other.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
    expect(existsSync(join(chats, `${run.value.sessionId}.jsonl`))).toBe(true);
    expect(sessionFiles(sb)).toEqual([]);
  });

  it('SIGTERM mid-tool: the prompt still answers cancelled, the abort is recorded as sigterm, exit 143', async () => {
    const sb = makeSandbox('acp-sigterm');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'slow', name: 'run_shell_command', args: { command: 'sleep 20' } }] }, { text: 'never' }]);
    const run = await withAcp(sb, { args: ['--approval-mode', 'yolo', '--scripted-responses', script] }, async (r) => {
      await r.initialize();
      const { sessionId } = await r.agent.request(m.session.new, { cwd: sb.cwd, mcpServers: [] });
      const turn = r.agent.request(m.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
      await r.waitForUpdate((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'in_progress');
      r.child.kill('SIGTERM');
      return { sessionId, answer: await turn };
    });
    expect(run.exitCode).toBe(143);
    expect(run.value.answer.stopReason).toBe('cancelled');
    expect(readLog(logPathOf(sb, run.value.sessionId)).at(-1)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'sigterm' } });
  });

  it('a cancelled turn denies the permission still pending; the tool never runs', async () => {
    const sb = makeSandbox('acp-cancel-permission');
    const marker = join(sb.scratch, 'marker');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'ask', name: 'run_shell_command', args: { command: `touch ${marker}` } }] }, { text: 'never' }]);
    let release!: () => void;
    const late = new Promise<acp.RequestPermissionResponse>((resolve) => (release = () => resolve(allow())));
    const run = await withAcp(sb, { args: ['--scripted-responses', script], permission: () => late }, async (r) => {
      await r.initialize();
      const { sessionId } = await r.agent.request(m.session.new, { cwd: sb.cwd, mcpServers: [] });
      const turn = r.agent.request(m.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'touch it' }] });
      await waitFor(() => r.permissions.length === 1);
      await r.agent.notify(m.session.cancel, { sessionId });
      const answer = await turn;
      release(); // an answer after the cancel changes nothing
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { sessionId, answer };
    });
    expect(run.value.answer.stopReason).toBe('cancelled');
    expect(existsSync(marker)).toBe(false);
    const records = readLog(logPathOf(sb, run.value.sessionId));
    expect(toolResults(records, 'ask')).toHaveLength(1);
    expect(records.at(-1)).toMatchObject({ type: 'system', subtype: 'turn_aborted' });
  });

  it('_mend/session/continue on an interrupted tool turn answers the call once and never runs it', async () => {
    const sb = makeSandbox('acp-continue');
    const marker = join(sb.scratch, 'marker');
    const path = crashedToolTurn(sb, marker);
    const run = await withAcp(sb, { args: ['--scripted-responses', continuationScript(sb, marker)] }, async (r) => {
      await r.initialize();
      const { recovery } = await load(r, sb);
      const from = r.updates.length;
      const answer = await r.agent.request('_mend/session/continue', { sessionId: SESSION, planId: recovery.planId });
      const after = await r.agent.request('_mend/session/recovery', { sessionId: SESSION });
      return { recovery, answer, during: r.updatesOf(SESSION, from), after };
    });
    expect(run.stderr).toBe('');
    const { recovery, answer, during, after } = run.value;
    expect(recovery).toMatchObject({ kind: 'interrupted_turn', cause: 'crash', canContinue: true });
    expect(AcpContinueAnswerSchema.parse(answer)).toEqual({ accepted: true, planId: recovery.planId, kind: 'interrupted_turn', stopReason: 'end_turn' });

    // The continuation answers call_1 exactly once, as failed with the outcome unknown, and runs nothing.
    const forCall = during.filter((u) => (u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') && u.toolCallId === 'call_1');
    expect(forCall).toHaveLength(1);
    expect(forCall[0]).toMatchObject({ sessionUpdate: 'tool_call_update', status: 'failed' });
    expect(JSON.stringify(forCall[0])).toContain('The outcome is unknown');
    expect(during.some((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'in_progress')).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(agentText(during)).toContain('I will check before running it again');

    const records = readLog(path);
    const results = toolResults(records, 'call_1');
    expect(results).toHaveLength(1);
    expect((results[0] as { recovery?: unknown }).recovery).toMatchObject({ planId: recovery.planId, synthetic: true });
    expect(RecoverySummaryCamelSchema.parse(after)).toMatchObject({ kind: 'clean', canContinue: false });
  });

  it('a stale planId is refused, both made up and after the log changed since the load', async () => {
    const sb = makeSandbox('acp-stale');
    const marker = join(sb.scratch, 'marker');
    const path = crashedToolTurn(sb, marker);
    const run = await withAcp(sb, { args: ['--scripted-responses', continuationScript(sb, marker)] }, async (r) => {
      await r.initialize();
      const { recovery } = await load(r, sb);
      // Another writer appends (a result for the call) after the editor saw the plan.
      const records = readLog(path);
      appendFileSync(
        path,
        `${JSON.stringify({
          uuid: 'r-late',
          parentUuid: records.at(-1)!.uuid,
          sessionId: SESSION,
          timestamp: '2026-01-01T10:01:00.000Z',
          type: 'tool_result',
          cwd: sb.cwd,
          version: 'mend/0.1.0',
          message: { role: 'user', parts: [{ functionResponse: { id: 'call_1', name: 'run_shell_command', response: { output: 'done' } } }] },
          toolCallResult: { callId: 'call_1', status: 'success' },
        })}\n`,
      );
      const size = readFileSync(path).length;
      const stale = await r.agent.request('_mend/session/continue', { sessionId: SESSION, planId: recovery.planId });
      const madeUp = await r.agent.request('_mend/session/continue', { sessionId: SESSION, planId: 'rp_0000000000000000' });
      return { recovery, madeUp, stale, size };
    });
    const { madeUp, stale, size } = run.value;
    expect(AcpContinueAnswerSchema.parse(madeUp)).toMatchObject({ accepted: false, code: 'stale_plan' });
    expect(AcpContinueAnswerSchema.parse(stale)).toMatchObject({ accepted: false, code: 'stale_plan' });
    expect(readFileSync(path).length).toBe(size);
    expect(existsSync(marker)).toBe(false);
  });

  it('refusals: a damaged history, a running turn; a cancelled permission outcome is a denial', async () => {
    const sb = makeSandbox('acp-refusals');
    const marker = join(sb.scratch, 'marker');
    const degraded = listCorpus().find((c) => c.name === 'history-gap-middle')!;
    const { dir, sessionPath } = copyCase(degraded);
    trackTempDir(dir);
    const before = readFileSync(sessionPath);
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'ask', name: 'run_shell_command', args: { command: `touch ${marker}` } }] },
      { text: 'Not touching it, then.' },
      { toolCalls: [{ id: 'slow', name: 'run_shell_command', args: { command: 'sleep 20' } }] },
      { text: 'never' },
    ]);
    const run = await withAcp(sb, { args: ['--scripted-responses', script] }, async (r) => {
      await r.initialize();
      await r.agent.request(m.session.load, { sessionId: sessionPath, cwd: sb.cwd, mcpServers: [] });
      const damaged = await r.agent.request('_mend/session/continue', { sessionId: sessionPath });
      const { sessionId } = await r.agent.request(m.session.new, { cwd: sb.cwd, mcpServers: [] });
      // No permission handler answer: the client's default here is `cancelled`.
      const denied = await r.agent.request(m.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'touch it' }] });
      await r.agent.request(m.session.setMode, { sessionId, modeId: 'yolo' });
      const turn = r.agent.request(m.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'sleep' }] });
      await r.waitForUpdate((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'slow' && u.status === 'in_progress');
      const running = await r.agent.request('_mend/session/continue', { sessionId });
      await r.agent.notify(m.session.cancel, { sessionId });
      await turn;
      return { damaged, denied, running };
    });
    const { damaged, denied, running } = run.value;
    expect(AcpContinueAnswerSchema.parse(damaged)).toMatchObject({ accepted: false, code: 'continuation_refused' });
    expect(readFileSync(sessionPath).equals(before)).toBe(true);
    expect(AcpTurnMetaSchema.parse((denied._meta as { mend: unknown }).mend).permissionDenials.map((d) => d.toolUseId)).toEqual(['ask']);
    expect(existsSync(marker)).toBe(false);
    expect(AcpContinueAnswerSchema.parse(running)).toMatchObject({ accepted: false, code: 'turn_running' });
  });

  it('/continue typed as a prompt shows the plan first, then continues; /plan only shows it', async () => {
    const sb = makeSandbox('acp-slash');
    const marker = join(sb.scratch, 'marker');
    const path = crashedToolTurn(sb, marker);
    const run = await withAcp(sb, { args: ['--scripted-responses', continuationScript(sb, marker)] }, async (r) => {
      await r.initialize({}); // a stock editor: no notices, no extensions
      const { recovery, answer: loaded } = await load(r, sb);
      await r.waitForUpdate((u) => u.sessionUpdate === 'available_commands_update');
      const atLoad = r.updatesOf(SESSION);
      const sizeAtPlan = readFileSync(path).length;
      const fromPlan = r.updates.length;
      const plan = await r.agent.request(m.session.prompt, { sessionId: SESSION, prompt: [{ type: 'text', text: '/plan' }] });
      const planUpdates = r.updatesOf(SESSION, fromPlan);
      const sizeAfterPlan = readFileSync(path).length;
      const from = r.updates.length;
      const answer = await r.agent.request(m.session.prompt, { sessionId: SESSION, prompt: [{ type: 'text', text: '/continue' }] });
      return { recovery, loaded, atLoad, plan, planUpdates, sizeAtPlan, sizeAfterPlan, answer, during: r.updatesOf(SESSION, from) };
    });
    const { recovery, atLoad, plan, planUpdates, sizeAtPlan, sizeAfterPlan, answer, during } = run.value;
    // Without the notices capability no notice is sent; the recovery text comes as an agent message.
    expect(atLoad.some((u) => u.sessionUpdate === 'notice')).toBe(false);
    expect(atLoad.some((u) => u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' && u.content.text.includes('interrupted'))).toBe(true);
    expect(atLoad.find((u) => u.sessionUpdate === 'available_commands_update')).toMatchObject({
      availableCommands: [{ name: 'continue' }, { name: 'plan' }],
    });

    expect(plan.stopReason).toBe('end_turn');
    expect(planUpdates).toHaveLength(1);
    expect(JSON.stringify(planUpdates[0])).toContain(recovery.planId);
    expect(sizeAfterPlan).toBe(sizeAtPlan);

    expect(answer.stopReason).toBe('end_turn');
    expect((answer._meta as { mend: { continue: unknown } }).mend.continue).toEqual({
      accepted: true,
      planId: recovery.planId,
      kind: 'interrupted_turn',
      stopReason: 'end_turn',
    });
    // The plan comes first, then the one answer for call_1, then the model's text.
    expect(during[0]).toMatchObject({ sessionUpdate: 'agent_message_chunk' });
    expect(JSON.stringify(during[0])).toContain(recovery.planId);
    const callUpdates = during.filter((u) => u.sessionUpdate === 'tool_call_update');
    expect(callUpdates).toHaveLength(1);
    expect(callUpdates[0]).toMatchObject({ toolCallId: 'call_1', status: 'failed' });
    expect(existsSync(marker)).toBe(false);
    expect(toolResults(readLog(path), 'call_1')).toHaveLength(1);
  });

  it('/continue on a clean session says there is nothing to continue and writes nothing', async () => {
    const sb = makeSandbox('acp-slash-clean');
    const path = new LogBuilder(SESSION, { cwd: sb.cwd })
      .user('hi')
      .assistant([{ text: 'hello' }])
      .write(logPathOf(sb, SESSION));
    const before = readFileSync(path);
    const run = await withAcp(sb, {}, async (r) => {
      await r.initialize();
      await load(r, sb);
      const from = r.updates.length;
      const answer = await r.agent.request(m.session.prompt, { sessionId: SESSION, prompt: [{ type: 'text', text: '/continue' }] });
      return { answer, during: r.updatesOf(SESSION, from) };
    });
    expect((run.value.answer._meta as { mend: { continue: unknown } }).mend.continue).toMatchObject({ accepted: false, code: 'nothing_to_continue' });
    expect(JSON.stringify(run.value.during)).toContain('nothing_to_continue');
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('a session another process holds loads read-only; continuing and prompting are refused with session_locked', async () => {
    const sb = makeSandbox('acp-locked');
    const marker = join(sb.scratch, 'marker');
    const path = crashedToolTurn(sb, marker);
    const holder = spawnMend(sb, ['--resume', SESSION, '--input-format', 'stream-json', '-o', 'stream-json'], { stdin: 'pipe', timeout: 30_000 });
    try {
      await watchStdout(holder).waitFor((line) => line.includes('"subtype":"recovery"'));
      const before = readFileSync(path);
      const run = await withAcp(sb, { args: ['--scripted-responses', continuationScript(sb, marker)] }, async (r) => {
        await r.initialize();
        const { recovery } = await load(r, sb);
        const replayed = r.updatesOf(SESSION).filter((u) => u.sessionUpdate === 'tool_call').length;
        const refused = await r.agent.request('_mend/session/continue', { sessionId: SESSION, planId: recovery.planId });
        const prompt = await r.agent.request(m.session.prompt, { sessionId: SESSION, prompt: [{ type: 'text', text: 'hello' }] }).then(
          () => null,
          (error: unknown) => error as acp.RequestError,
        );
        return { recovery, replayed, refused, prompt };
      });
      const { recovery, replayed, refused, prompt } = run.value;
      expect(recovery.kind).toBe('interrupted_turn');
      expect(recovery.activeWriter).toMatchObject({ pid: holder.pid });
      expect(replayed).toBe(1);
      expect(AcpContinueAnswerSchema.parse(refused)).toMatchObject({ accepted: false, code: 'session_locked' });
      expect(prompt?.code).toBe(-32603);
      expect(prompt?.data).toMatchObject({ code: 'session_locked' });
      expect(readFileSync(path).equals(before)).toBe(true);
      expect(existsSync(marker)).toBe(false);
    } finally {
      holder.stdin?.end();
      await holder;
    }
  });

  it('auto-continue only on opt-in, and only where the policy allows it', async () => {
    const sb = makeSandbox('acp-auto');
    const marker = join(sb.scratch, 'marker');
    const path = crashedToolTurn(sb, marker);
    const script = continuationScript(sb, marker);
    // Without the opt-in: nothing runs.
    await withAcp(sb, { args: ['--scripted-responses', script] }, async (r) => {
      await r.initialize();
      const { answer } = await load(r, sb);
      expect((answer._meta as { mend: { autoContinue?: unknown } }).mend.autoContinue).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    expect(toolResults(readLog(path), 'call_1')).toHaveLength(0);

    // With it, on a crash: the continuation starts right after the answer.
    const run = await withAcp(sb, { args: ['--scripted-responses', script] }, async (r) => {
      await r.initialize();
      const { answer, recovery } = await load(r, sb, SESSION, { mend: { autoContinue: true } });
      await waitFor(() => agentText(r.updatesOf(SESSION)).includes('I will check'));
      await waitFor(() => toolResults(readLog(path), 'call_1').length === 1 && readLog(path).at(-1)?.type === 'assistant');
      return { answer, recovery, wire: r.wire };
    });
    expect((run.value.answer._meta as { mend: { autoContinue?: unknown } }).mend.autoContinue).toEqual({ started: true });
    expect(existsSync(marker)).toBe(false);
    // The continuation's updates come after the load answer.
    const answerAt = run.value.wire.findIndex((msg) => !('method' in msg) && (msg['result'] as { _meta?: unknown } | undefined)?._meta !== undefined);
    const resultUpdate = wireUpdates(run.value.wire, SESSION).find((u) => u.update['sessionUpdate'] === 'tool_call_update');
    expect(resultUpdate!.index).toBeGreaterThan(answerAt);

    // An aborted turn needs confirmation: the opt-in does not continue it.
    const sb2 = makeSandbox('acp-auto-aborted');
    const path2 = crashedToolTurn(sb2, marker, { aborted: true });
    const before = readFileSync(path2);
    const refused = await withAcp(sb2, { args: ['--scripted-responses', writeScript(sb2, [{ text: 'x' }, { text: 'y' }])] }, async (r) => {
      await r.initialize();
      const { answer } = await load(r, sb2, SESSION, { mend: { autoContinue: true } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      return answer;
    });
    expect((refused.value._meta as { mend: { autoContinue?: unknown } }).mend.autoContinue).toMatchObject({ started: false, code: 'confirmation_required' });
    expect(readFileSync(path2).equals(before)).toBe(true);
  });

  it('--acp takes its sessions from the editor: session flags and prompts are usage errors', async () => {
    const sb = makeSandbox('acp-usage');
    const run = await mend(sb, ['--acp', '--continue']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--acp');
    expect(run.stdout).toBe('');
  });

  it('session/resume answers the same summary without a replay; list and close', async () => {
    const sb = makeSandbox('acp-resume');
    const marker = join(sb.scratch, 'marker');
    crashedToolTurn(sb, marker);
    const run = await withAcp(sb, {}, async (r) => {
      await r.initialize();
      const resumed = await r.agent.request(m.session.resume, { sessionId: SESSION, cwd: sb.cwd });
      const beforeAnswer = r.updatesOf(SESSION).filter((u) => u.sessionUpdate !== 'notice' && u.sessionUpdate !== 'available_commands_update');
      const list = await r.agent.request(m.session.list, { cwd: sb.cwd });
      await r.agent.request(m.session.close, { sessionId: SESSION });
      const afterClose = await r.agent.request('_mend/session/recovery', { sessionId: SESSION }).then(
        () => null,
        (error: unknown) => (error as acp.RequestError).code,
      );
      return { resumed, beforeAnswer, list, afterClose };
    });
    const { resumed, beforeAnswer, list, afterClose } = run.value;
    expect(RecoverySummaryCamelSchema.parse((resumed._meta as { mend: { recovery: unknown } }).mend.recovery)).toMatchObject({
      kind: 'interrupted_turn',
      recoveryKind: 'interrupted_turn',
    });
    expect(beforeAnswer).toEqual([]);
    expect(list.sessions).toEqual([expect.objectContaining({ sessionId: SESSION, cwd: sb.cwd, title: 'create the marker' })]);
    expect(afterClose).toBe(-32002);
    expect(sessionFiles(sb)).toHaveLength(1);
  });
});
