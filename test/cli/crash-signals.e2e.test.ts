/**
 * Real crashes (kill -9) and signals (SIGINT, SIGTERM) against the built CLI with the
 * scripted model, then the resume that follows.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupSandboxes,
  groupAlive,
  killMarkedGroups,
  markerLines,
  slowCommand,
  finished,
  lockFilesUnder,
  makeSandbox,
  mend,
  readLog,
  sessionFiles,
  snapshotTree,
  spawnMend,
  transcript,
  waitFor,
  watchStdout,
  writeScript,
  type Sandbox,
} from '../support/cli.js';

function lastRecord(sb: Sandbox) {
  const [log] = sessionFiles(sb);
  return readLog(log!).at(-1);
}

afterAll(cleanupSandboxes);

describe.concurrent('kill -9, then resume', { timeout: 60_000 }, () => {
  it('kill -9 while a shell tool runs: interrupted_turn (crash); --continue-interrupted finishes without re-running the tool', async () => {
    const sb = makeSandbox('kill-tool');
    const marker = join(sb.scratch, 'marker.txt');
    const script = writeScript(sb, [
      { text: 'Running the slow step.', toolCalls: [{ id: 'call_slow', name: 'run_shell_command', args: { command: slowCommand(marker) } }] },
      { text: 'Finished after recovery.' },
    ]);
    try {
      const sub = spawnMend(sb, ['-p', 'do the slow step', '--scripted-responses', script, '--approval-mode', 'yolo', '-o', 'stream-json']);
      await waitFor(() => markerLines(marker).length === 1, 10_000, 'the tool to start');
      sub.kill('SIGKILL');
      expect((await finished(sub)).signal).toBe('SIGKILL');
      killMarkedGroups(marker);

      const [log] = sessionFiles(sb);
      expect(readLog(log!).map((r) => r.type)).toEqual(['user', 'assistant']);

      // Inspect: reported, not continued, nothing written.
      const before = snapshotTree(sb.home);
      const inspect = await mend(sb, ['--continue', '-o', 'stream-json', '--scripted-responses', script]);
      expect(inspect.exitCode).toBe(0);
      const ti = transcript(inspect.stdout);
      expect(ti.kinds).toEqual(['system:init', 'system:recovery', 'result']);
      expect(ti.recovery).toMatchObject({
        kind: 'interrupted_turn',
        cause: 'crash',
        can_continue: true,
        action: 'awaiting_confirmation',
        repairs: [{ type: 'synthesized_tool_result', count: 1 }],
        continuation: { mode: 'tool_result_parts', part_count: 1 },
      });
      expect(snapshotTree(sb.home)).toEqual(before);

      const cont = await mend(sb, ['--continue', '--continue-interrupted', '--scripted-responses', script, '--approval-mode', 'yolo', '-o', 'stream-json']);
      expect(cont.stderr).toBe('');
      expect(cont.exitCode).toBe(0);
      const tc = transcript(cont.stdout);
      expect(tc.recovery).toMatchObject({ kind: 'interrupted_turn', action: 'continue', plan_id: ti.recovery!.plan_id });
      expect(tc.result).toMatchObject({ subtype: 'success', result: 'Finished after recovery.' });
      expect(markerLines(marker)).toHaveLength(1);
      // The dead writer's lock was taken over, and released at the end.
      expect(lockFilesUnder(sb.home)).toEqual([]);

      const records = readLog(log!);
      const results = records.filter((r) => r.type === 'tool_result');
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ recovery: { synthetic: true, planId: ti.recovery!.plan_id }, toolCallResult: { callId: 'call_slow' } });
      expect(JSON.stringify(results[0]!.message)).toMatch(/outcome is unknown/i);

      const plan = await mend(sb, ['plan', log!, '--json']);
      expect(plan.exitCode).toBe(0);
      expect(JSON.parse(plan.stdout)).toMatchObject({ kind: 'clean', cause: 'none', canContinue: false, continuation: null });
    } finally {
      killMarkedGroups(marker);
    }
  });

  it('kill -9 while the model stream stalls: interrupted_prompt; --continue-interrupted finishes it', async () => {
    const sb = makeSandbox('kill-stall');
    const stalled = writeScript(sb, [{ text: 'Thinking about the answer', chunkSize: 4, stallMs: 'forever' }]);
    const sub = spawnMend(sb, ['-p', 'STALL-PROMPT-91 what is up', '--scripted-responses', stalled, '-o', 'stream-json', '--include-partial-messages']);
    const out = watchStdout(sub);
    await out.waitFor((l) => l.includes('"stream_event"') && l.includes('text_delta'));
    sub.kill('SIGKILL');
    expect((await finished(sub)).signal).toBe('SIGKILL');
    const [log] = sessionFiles(sb);
    expect(readLog(log!).map((r) => r.type)).toEqual(['user']);

    const inspect = await mend(sb, ['--continue', '-o', 'stream-json']);
    expect(inspect.exitCode).toBe(0);
    expect(transcript(inspect.stdout).recovery).toMatchObject({
      kind: 'interrupted_prompt',
      cause: 'crash',
      action: 'awaiting_confirmation',
      continuation: { mode: 'retry_user_parts', part_count: 1 },
    });

    // No model entry in the history yet, so the continuation plays response 0 of its script.
    const next = writeScript(sb, [{ text: 'Recovered answer.' }]);
    const cont = await mend(sb, ['--continue', '--continue-interrupted', '--scripted-responses', next, '-o', 'stream-json']);
    expect(cont.exitCode).toBe(0);
    const t = transcript(cont.stdout);
    expect(t.kinds).toEqual(['system:init', 'system:recovery', 'assistant', 'result']);
    expect(t.result).toMatchObject({ subtype: 'success', result: 'Recovered answer.' });
    const records = readLog(log!);
    expect(records.filter((r) => r.type === 'user')).toHaveLength(1);
    expect(records.map((r) => (r.type === 'system' ? `system:${r.subtype}` : r.type))).toEqual(['user', 'system:recovery', 'assistant']);

    const plan = await mend(sb, ['plan', log!, '--json']);
    expect(JSON.parse(plan.stdout)).toMatchObject({ kind: 'clean' });
  });
});

describe.concurrent('signals', { timeout: 60_000 }, () => {
  it('SIGINT while the model stalls: exit 130, one aborted result, log ends with turn_aborted (sigint)', async () => {
    const sb = makeSandbox('sigint');
    const script = writeScript(sb, [{ text: 'Partial words here', chunkSize: 4, stallMs: 'forever' }]);
    const sub = spawnMend(sb, ['-p', 'take your time', '--scripted-responses', script, '-o', 'stream-json', '--include-partial-messages']);
    const out = watchStdout(sub);
    await out.waitFor((l) => l.includes('text_delta'));
    sub.kill('SIGINT');
    const r = await finished(sub);
    expect(r.exitCode).toBe(130);
    const t = transcript(r.stdout);
    expect(t.result).toMatchObject({ subtype: 'error_during_execution', is_error: true, error: { code: 'aborted' } });
    expect(t.kinds.filter((k) => k === 'result')).toHaveLength(1);
    expect(lastRecord(sb)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'sigint' } });

    const again = await mend(sb, ['--continue', '-o', 'stream-json']);
    expect(transcript(again.stdout).recovery).toMatchObject({ cause: 'aborted', can_auto_continue: false });
  });

  it('SIGTERM while a shell tool runs: exit 143, the result is an "aborted" error, turn_aborted (sigterm); --auto-continue does not continue', async () => {
    const sb = makeSandbox('sigterm');
    const marker = join(sb.scratch, 'marker.txt');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'call_term', name: 'run_shell_command', args: { command: slowCommand(marker) } }] }]);
    try {
      const sub = spawnMend(sb, ['-p', 'run it', '--scripted-responses', script, '--approval-mode', 'yolo', '-o', 'stream-json']);
      await waitFor(() => markerLines(marker).length === 1, 10_000, 'the tool to start');
      sub.kill('SIGTERM');
      const r = await finished(sub);
      expect(r.exitCode).toBe(143);
      const t = transcript(r.stdout);
      expect(t.result).toMatchObject({ is_error: true, error: { code: 'aborted' } });

      const [log] = sessionFiles(sb);
      const records = readLog(log!);
      const result = records.find((rec) => rec.type === 'tool_result');
      expect(result).toBeDefined();
      const part = result!.type === 'tool_result' ? result!.message.parts[0]!.functionResponse! : undefined;
      expect(part).toMatchObject({ id: 'call_term', name: 'run_shell_command' });
      expect(String(part!.response['error'])).toMatch(/aborted/i);
      expect(result!.type === 'tool_result' && result!.toolCallResult?.status).not.toBe('success');
      expect(records.at(-1)).toMatchObject({ type: 'system', subtype: 'turn_aborted', systemPayload: { reason: 'sigterm' } });

      // The aborted command's process group is gone too.
      const pgid = Number(markerLines(marker)[0]);
      await waitFor(() => !groupAlive(pgid), 3_000, 'the aborted shell to be killed');

      const before = snapshotTree(sb.home);
      const auto = await mend(sb, ['--continue', '--auto-continue', '--scripted-responses', script, '-o', 'stream-json']);
      expect(auto.exitCode).toBe(0);
      const ta = transcript(auto.stdout);
      expect(ta.recovery).toMatchObject({ cause: 'aborted', can_auto_continue: false });
      expect(ta.recovery!.action).not.toBe('continue');
      expect(ta.kinds).toEqual(['system:init', 'system:recovery', 'result']);
      expect(snapshotTree(sb.home)).toEqual(before);
      expect(markerLines(marker)).toHaveLength(1);
    } finally {
      killMarkedGroups(marker);
    }
  });
});
