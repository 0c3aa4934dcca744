/**
 * Approval in a headless run: nobody can be asked, so 'ask' is a refusal that is
 * recorded as an error result and listed in the result's permission_denials.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, makeSandbox, mend, readLog, sessionFiles, transcript, writeScript, type Sandbox } from '../support/cli.js';

function writeCallScript(sb: Sandbox, target: string, withRead = false) {
  return writeScript(sb, [
    {
      text: 'Writing the file.',
      toolCalls: [
        ...(withRead ? [{ id: 'call_ls', name: 'list_directory', args: { path: sb.cwd } }] : []),
        { id: 'call_w1', name: 'write_file', args: { file_path: target, content: 'hello from the model\n' } },
      ],
    },
    { text: 'Finished.' },
  ]);
}

function toolResults(stdout: string) {
  return transcript(stdout).users.flatMap((u) => (Array.isArray(u.message.content) ? u.message.content : []));
}

afterAll(cleanupSandboxes);

describe.concurrent('approval modes', { timeout: 60_000 }, () => {
  it('default mode refuses write_file: an error result, listed in permission_denials, nothing written', async () => {
    const sb = makeSandbox('approve-default');
    const target = join(sb.cwd, 'out.txt');
    const r = await mend(sb, ['-p', 'write it', '--scripted-responses', writeCallScript(sb, target), '-o', 'stream-json']);
    expect(r.exitCode).toBe(0);
    const t = transcript(r.stdout);
    expect(t.init.permission_mode).toBe('default');
    expect(existsSync(target)).toBe(false);
    const [block] = toolResults(r.stdout);
    expect(block).toMatchObject({ type: 'tool_result', tool_use_id: 'call_w1', is_error: true });
    expect(block!.type === 'tool_result' && block!.content).toMatch(/Permission denied/);
    expect(t.result).toMatchObject({
      subtype: 'success',
      result: 'Finished.',
      permission_denials: [{ tool_name: 'write_file', tool_use_id: 'call_w1', tool_input: { file_path: target, content: 'hello from the model\n' } }],
    });
    const [log] = sessionFiles(sb);
    const rec = readLog(log!).find((x) => x.type === 'tool_result');
    expect(rec).toMatchObject({ toolCallResult: { callId: 'call_w1', status: 'error' } });
  });

  it('text mode says each refusal on stderr, naming the flags that allow it', async () => {
    const sb = makeSandbox('approve-text');
    const target = join(sb.cwd, 'out.txt');
    for (const verbose of [[], ['--verbose']]) {
      const r = await mend(sb, ['-p', 'write it', ...verbose, '--scripted-responses', writeCallScript(sb, target)]);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toContain('Finished.');
      const refusals = r.stderr.split('\n').filter((l) => l.startsWith('mend: refused '));
      expect(refusals).toEqual([expect.stringContaining('refused write_file (call_w1): Permission denied')]);
      expect(refusals[0]).toContain('--allowed-tools write_file');
      expect(refusals[0]).toContain('--approval-mode auto-edit');
    }
    const plan = await mend(sb, ['-p', 'write it', '--approval-mode', 'plan', '--scripted-responses', writeCallScript(sb, target)]);
    expect(plan.stderr).toContain('mend: refused write_file (call_w1): Permission denied: write_file changes state and approval mode "plan" is read-only');
  });

  it('--allowed-tools write_file lets it run in default mode', async () => {
    const sb = makeSandbox('approve-allowed');
    const target = join(sb.cwd, 'out.txt');
    const r = await mend(sb, ['-p', 'write it', '--allowed-tools', 'write_file', '--scripted-responses', writeCallScript(sb, target), '-o', 'stream-json']);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('hello from the model\n');
    expect(toolResults(r.stdout)).toMatchObject([{ tool_use_id: 'call_w1', is_error: false }]);
    expect(transcript(r.stdout).result).toMatchObject({ subtype: 'success', permission_denials: [] });
  });

  it('plan mode refuses even an allowed tool (read tools still run)', async () => {
    const sb = makeSandbox('approve-plan');
    const target = join(sb.cwd, 'out.txt');
    const r = await mend(sb, [
      '-p',
      'write it',
      '--approval-mode',
      'plan',
      '--allowed-tools',
      'write_file',
      '--scripted-responses',
      writeCallScript(sb, target, true),
      '-o',
      'stream-json',
    ]);
    expect(r.exitCode).toBe(0);
    expect(existsSync(target)).toBe(false);
    expect(toolResults(r.stdout)).toMatchObject([
      { tool_use_id: 'call_ls', is_error: false },
      { tool_use_id: 'call_w1', is_error: true },
    ]);
    const t = transcript(r.stdout);
    expect(t.init.permission_mode).toBe('plan');
    expect(t.result.permission_denials).toEqual([expect.objectContaining({ tool_name: 'write_file', tool_use_id: 'call_w1' })]);
  });
});
