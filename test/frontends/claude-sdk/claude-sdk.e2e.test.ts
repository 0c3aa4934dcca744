/**
 * Acceptance: hosts written for `@anthropic-ai/claude-agent-sdk` (0.3.333, the
 * real `query()`) drive the built mend unchanged, with the scripted provider.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { continueInterruptedArgs, continueLastTurnViaClaudeQuery, isRecoveryMessage, recoveryMessageOf } from '../../../src/sdk/index.js';
import { execa } from 'execa';
import { REPO_ROOT, baseEnv, cleanupSandboxes, makeSandbox, markerLines, slowCommand, waitFor, writeScript } from '../../support/cli.js';
import { onlyLog } from '../../sdk/helpers.js';
import { claudeOptions, collectAll, promptStream, runClaude, type SDKMessage, type Spawned } from './helpers.js';
import { query } from '@anthropic-ai/claude-agent-sdk';

afterAll(cleanupSandboxes);

const results = (messages: SDKMessage[]) => messages.filter((m) => m.type === 'result');
const kinds = (messages: SDKMessage[]) => messages.map((m) => (m.type === 'system' ? `system:${m.subtype}` : m.type));

/** Kills what a SIGKILLed mend left running: the shell group of a slow command (its pid is the marker's first line). */
function killShellGroup(marker: string): void {
  for (const pid of markerLines(marker)) {
    try {
      process.kill(-Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

describe.concurrent('the Claude Agent SDK against the built mend', () => {
  it('runs a plain prompt: init with Claude fields, the answer, a success result with Claude fields', async () => {
    const sb = makeSandbox('claude-plain');
    const { messages, error } = await collectAll(runClaude(sb, 'hello', writeScript(sb, [{ text: 'hello from mend' }])));
    expect(error).toBeUndefined();
    expect(kinds(messages)).toEqual(['system:init', 'assistant', 'result']);
    expect(messages[0]).toMatchObject({ permissionMode: 'default', apiKeySource: 'none', mcp_servers: [], slash_commands: [] });
    expect(messages.at(-1)).toMatchObject({
      subtype: 'success',
      result: 'hello from mend',
      stop_reason: 'end_turn',
      total_cost_usd: 0,
      modelUsage: { scripted: { inputTokens: expect.any(Number) } },
    });
  });

  it('asks canUseTool (mend tool names) and runs the call on allow', async () => {
    const sb = makeSandbox('claude-allow');
    const file = join(sb.cwd, 'a.txt');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: file, content: 'x' } }] }, { text: 'written' }]);
    const asked: Array<{ name: string; id: string }> = [];
    const q = runClaude(sb, 'write it', script, {
      canUseTool: async (name, input, { toolUseID }) => {
        asked.push({ name, id: toolUseID });
        return { behavior: 'allow', updatedInput: input };
      },
    });
    const { messages, error } = await collectAll(q);
    expect(error).toBeUndefined();
    expect(asked).toEqual([{ name: 'write_file', id: 'w1' }]);
    expect(readFileSync(file, 'utf8')).toBe('x');
    expect(results(messages)).toMatchObject([{ subtype: 'success', result: 'written' }]);
  });

  it('a deny refuses the call and the turn goes on; a deny with interrupt stops the turn', async () => {
    const sb = makeSandbox('claude-deny');
    const file = join(sb.cwd, 'a.txt');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: file, content: 'x' } }] }, { text: 'understood' }]);
    const denied = await collectAll(runClaude(sb, 'write it', script, { canUseTool: async () => ({ behavior: 'deny', message: 'not today' }) }));
    expect(denied.error).toBeUndefined();
    expect(existsSync(file)).toBe(false);
    expect(results(denied.messages)).toMatchObject([
      { subtype: 'success', result: 'understood', permission_denials: [{ tool_name: 'write_file', tool_use_id: 'w1' }] },
    ]);

    const sb2 = makeSandbox('claude-deny-stop');
    const script2 = writeScript(sb2, [
      { toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: file, content: 'x' } }] },
      { text: 'must not be reached' },
    ]);
    const stopped = await collectAll(runClaude(sb2, 'write it', script2, { canUseTool: async () => ({ behavior: 'deny', message: 'stop', interrupt: true }) }));
    const result = results(stopped.messages)[0];
    expect(result).toMatchObject({ is_error: true });
    expect((result as { errors?: string[] }).errors?.length).toBe(1);
    expect(stopped.messages.filter((m) => m.type === 'assistant')).toHaveLength(1);
  });

  it('an answer to a request mend cancelled (its own timeout) is dropped quietly: no system/error reaches the host', async () => {
    const sb = makeSandbox('claude-cancelled');
    const file = join(sb.cwd, 'late.txt');
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: file, content: 'late' } }] },
      { text: 'gave up waiting' },
    ]);
    const stream = promptStream();
    const q = runClaude(sb, stream.messages, script, {
      extraArgs: { 'permission-timeout': '300' },
      canUseTool: async (_name, input) => {
        // Answer long after mend's 300 ms: mend has cancelled by then (the SDK still answers).
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return { behavior: 'allow', updatedInput: input };
      },
    });
    stream.push('write it');
    const seen: SDKMessage[] = [];
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'result') {
        // Give the late answer time to arrive before ending stdin.
        await new Promise((resolve) => setTimeout(resolve, 2000));
        stream.end();
      }
    }
    expect(results(seen)).toMatchObject([{ subtype: 'success', result: 'gave up waiting', permission_denials: [{ tool_use_id: 'w1' }] }]);
    expect(seen.filter((m) => m.type === 'system' && (m as { subtype: string }).subtype === 'error')).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it("permissionMode 'acceptEdits': edits run unasked, a shell command without canUseTool is refused (nobody asked)", async () => {
    const sb = makeSandbox('claude-accept');
    const file = join(sb.cwd, 'b.txt');
    const marker = join(sb.scratch, 'ran.txt');
    const script = writeScript(sb, [
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', args: { file_path: file, content: 'y' } },
          { id: 's1', name: 'run_shell_command', args: { command: `touch '${marker}'` } },
        ],
      },
      { text: 'done' },
    ]);
    const { messages, error } = await collectAll(runClaude(sb, 'go', script, { permissionMode: 'acceptEdits' }));
    expect(error).toBeUndefined();
    expect(messages[0]).toMatchObject({ permissionMode: 'acceptEdits', permission_mode: 'auto-edit' });
    expect(readFileSync(file, 'utf8')).toBe('y');
    expect(existsSync(marker)).toBe(false);
    expect(results(messages)).toMatchObject([{ subtype: 'success', permission_denials: [{ tool_name: 'run_shell_command' }] }]);
  });

  it('setPermissionMode answers in Claude names; an error result reaches the host as text', async () => {
    const sb = makeSandbox('claude-errors');
    const stream = promptStream();
    const q = runClaude(sb, stream.messages, writeScript(sb, [{ text: 'ok' }]));
    await expect(q.setPermissionMode('bypassPermissions')).resolves.toEqual({ mode: 'bypassPermissions' });
    await expect(q.setPermissionMode('auto')).rejects.toThrow(/classifier/);
    // mend's code reaches the SDK's error under the name it reads (error_code).
    await expect(q.setModel('')).rejects.toMatchObject({ errorCode: 'invalid_request' });
    stream.end();
    await collectAll(q);

    const missing = await collectAll(runClaude(sb, 'hi', writeScript(sb, [{ text: 'never' }]), { resume: '00000000-0000-4000-8000-000000000000' }));
    expect(results(missing.messages)).toMatchObject([{ is_error: true, errors: [expect.stringContaining('00000000-0000-4000-8000-000000000000')] }]);
    expect(missing.error?.message).toMatch(/00000000-0000-4000-8000-000000000000/);

    const usage = await collectAll(runClaude(sb, 'hi', writeScript(sb, [{ text: 'never' }]), { permissionMode: 'auto' }));
    expect(usage.error?.message).toMatch(/classifier/);
  });

  it('continue: true on a session killed with SIGKILL mid-tool: recovery, one answer to the call, the tool never runs again', async () => {
    const sb = makeSandbox('claude-crash');
    const marker = join(sb.scratch, 'ran.txt');
    const spawned: Spawned = { children: [] };
    // The scripted model answers by the number of model entries in the history: 0 the slow call, 1 the continuation.
    const script = writeScript(sb, [{ toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: slowCommand(marker) } }] }, { text: 'Continued.' }]);
    const first = query({ prompt: 'run it', options: claudeOptions(sb, script, { permissionMode: 'bypassPermissions' }, spawned) });
    const crashed = collectAll(first);
    try {
      await waitFor(() => markerLines(marker).length > 0, 15_000, 'the slow command to start');
      spawned.children[0]!.kill('SIGKILL');
      expect((await crashed).error?.message).toMatch(/SIGKILL|exited/);
    } finally {
      killShellGroup(marker);
    }

    // The streaming-input pattern: no prompt until the host has read the recovery line and decided.
    const stream = promptStream();
    const q = runClaude(sb, stream.messages, script, { continue: true });
    const seen: SDKMessage[] = [];
    let answer: unknown;
    for await (const m of q) {
      seen.push(m);
      const recovery = recoveryMessageOf(m);
      if (recovery) {
        expect(recovery).toMatchObject({ kind: 'interrupted_turn', cause: 'crash', can_continue: true, action: 'awaiting_confirmation' });
        answer = await continueLastTurnViaClaudeQuery(q, recovery.plan_id);
      }
      if (m.type === 'result') break;
    }
    stream.end();
    expect(answer).toMatchObject({ accepted: true, interruption: 'interrupted_turn' });
    expect(seen.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Continued.' });
    expect(markerLines(marker)).toHaveLength(1);
    const answers = onlyLog(sb).filter((r) => r.type === 'tool_result' && r.message.parts.some((p) => p.functionResponse?.id === 'c1'));
    expect(answers).toHaveLength(1);
  });

  it('continues through extraArgs (--continue-interrupted) as well', async () => {
    const sb = makeSandbox('claude-crash-args');
    const marker = join(sb.scratch, 'ran.txt');
    const spawned: Spawned = { children: [] };
    // The scripted model answers by the number of model entries in the history: 0 the slow call, 1 the continuation.
    const script = writeScript(sb, [{ toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: slowCommand(marker) } }] }, { text: 'Continued.' }]);
    const crashed = collectAll(query({ prompt: 'run it', options: claudeOptions(sb, script, { permissionMode: 'bypassPermissions' }, spawned) }));
    try {
      await waitFor(() => markerLines(marker).length > 0, 15_000, 'the slow command to start');
      spawned.children[0]!.kill('SIGKILL');
      await crashed;
    } finally {
      killShellGroup(marker);
    }
    const stream = promptStream();
    const q = runClaude(sb, stream.messages, script, { continue: true, extraArgs: continueInterruptedArgs() });
    const seen: SDKMessage[] = [];
    for await (const m of q) {
      seen.push(m);
      if (m.type === 'result') break;
    }
    stream.end();
    expect(seen.find((m) => isRecoveryMessage(m))).toMatchObject({ action: 'continue' });
    expect(seen.at(-1)).toMatchObject({ subtype: 'success', result: 'Continued.' });
    expect(markerLines(marker)).toHaveLength(1);
  });

  it('interrupt() mid-tool stops the turn; the next streamed prompt runs in the same process', async () => {
    const sb = makeSandbox('claude-interrupt');
    const marker = join(sb.scratch, 'ran.txt');
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: slowCommand(marker) } }] },
      { text: 'second answer' },
    ]);
    const stream = promptStream();
    const q = runClaude(sb, stream.messages, script, { permissionMode: 'bypassPermissions' });
    stream.push('run the slow thing');
    const seen: SDKMessage[] = [];
    let interrupted = false;
    const watcher = (async () => {
      await waitFor(() => markerLines(marker).length > 0, 15_000, 'the slow command to start');
      await q.interrupt();
      interrupted = true;
    })();
    try {
      for await (const m of q) {
        seen.push(m);
        if (m.type === 'result' && results(seen).length === 1) stream.push('and now?');
        if (m.type === 'result' && results(seen).length === 2) break;
      }
    } finally {
      stream.end();
      killShellGroup(marker);
    }
    await watcher;
    expect(interrupted).toBe(true);
    const [first, second] = results(seen);
    expect(first).toMatchObject({ is_error: true, errors: [expect.any(String)] });
    expect(second).toMatchObject({ subtype: 'success', result: 'second answer' });
  });
});

describe('examples/claude-agent-sdk-host.ts', () => {
  it('reads recovery before its prompt, continues the killed turn once, then asks its question', async () => {
    const sb = makeSandbox('claude-example');
    const marker = join(sb.scratch, 'ran.txt');
    const spawned: Spawned = { children: [] };
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: slowCommand(marker) } }] },
      { text: 'Continued.' },
      { text: 'Nothing else ran.' },
    ]);
    const crashed = collectAll(query({ prompt: 'run it', options: claudeOptions(sb, script, { permissionMode: 'bypassPermissions' }, spawned) }));
    try {
      await waitFor(() => markerLines(marker).length > 0, 15_000, 'the slow command to start');
      spawned.children[0]!.kill('SIGKILL');
      await crashed;
    } finally {
      killShellGroup(marker);
    }
    const run = await execa('node', [join(REPO_ROOT, 'dist/examples/claude-agent-sdk-host.js'), sb.cwd, 'what ran?', '--', '--scripted-responses', script], {
      env: baseEnv(sb),
      extendEnv: false,
      reject: false,
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('recovery: interrupted_turn (cause crash)');
    expect(run.stdout).toContain('continuing the interrupted turn');
    expect(run.stdout).toContain('answer: Continued.');
    expect(run.stdout).toContain('answer: Nothing else ran.');
    expect(run.exitCode).toBe(0);
    expect(markerLines(marker)).toHaveLength(1);
  });
});
