/**
 * The stream-json input mode as a host sees it, with the built CLI: degraded
 * refusals that hold for every prompt, approvals that end cleanly, and control
 * answers for things that are not pending.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CORPUS_DIR } from '../support/corpus.js';
import {
  cleanupSandboxes,
  finished,
  logPathOf,
  makeSandbox,
  mend,
  parseStreamJson,
  spawnMend,
  watchStdout,
  writeScript,
  type Sandbox,
} from '../support/cli.js';

afterAll(cleanupSandboxes);

const userLine = (text: string) => JSON.stringify({ type: 'user', session_id: '', message: { role: 'user', content: text }, parent_tool_use_id: null });
const control = (id: string, request: Record<string, unknown>) => JSON.stringify({ type: 'control_request', request_id: id, request });

function installCase(sb: Sandbox, name: string): string {
  const src = join(CORPUS_DIR, name, 'session.jsonl');
  const id = (JSON.parse(readFileSync(src, 'utf8').split('\n')[0]!) as { sessionId: string }).sessionId;
  mkdirSync(sb.chats, { recursive: true });
  copyFileSync(src, logPathOf(sb, id));
  return id;
}

describe('stream-json input', () => {
  it('refuses every prompt on a degraded session, not only the first, and writes nothing', async () => {
    const sb = makeSandbox('serve');
    const id = installCase(sb, 'history-gap-middle');
    const before = readFileSync(logPathOf(sb, id));
    const script = writeScript(sb, [{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }]);
    const r = await mend(sb, ['--resume', id, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], {
      input: `${userLine('one')}\n${userLine('two')}\n`,
    });
    expect(r.exitCode).toBe(0);
    const results = parseStreamJson(r.stdout).filter((m) => m.type === 'result');
    expect(results.map((m) => [m.is_error, m.error?.code])).toEqual([
      [true, 'degraded_history'],
      [true, 'degraded_history'],
    ]);
    expect(readFileSync(logPathOf(sb, id)).equals(before)).toBe(true);
  });

  it('an approval that can no longer be answered (stdin ended) is refused, and the process ends at once', async () => {
    const sb = makeSandbox('serve');
    const script = writeScript(sb, [
      { text: 'writing', toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: join(sb.scratch, 'x.txt'), content: 'x' } }] },
      { text: 'done' },
    ]);
    const r = await mend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], {
      input: `${control('i1', { subtype: 'initialize' })}\n${userLine('write it')}\n`,
      timeout: 15_000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.durationMs).toBeLessThan(10_000);
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // stdin ended before the tool was reached: nobody can answer, so nobody is asked.
    expect(lines.filter((m) => m['type'] === 'control_request')).toEqual([]);
    const toolResult = lines.find((m) => m['type'] === 'user') as { message: { content: Array<{ is_error: boolean; content: string }> } } | undefined;
    expect(toolResult?.message.content[0]).toMatchObject({ is_error: true, content: expect.stringContaining('stdin is closed') });
    const result = lines.find((m) => m['type'] === 'result') as { permission_denials: unknown[] } | undefined;
    expect(result?.permission_denials).toEqual([expect.objectContaining({ tool_name: 'write_file', tool_use_id: 'w1' })]);
  });

  it('a control_response or cancel for nothing pending is a system error, and reading goes on', async () => {
    const sb = makeSandbox('serve');
    const script = writeScript(sb, [{ text: 'hello' }]);
    const r = await mend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], {
      input: [
        JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: 'nope', response: {} } }),
        JSON.stringify({ type: 'control_cancel_request', request_id: 'nope' }),
        userLine('hi'),
      ].join('\n'),
    });
    expect(r.exitCode).toBe(0);
    const messages = parseStreamJson(r.stdout);
    const errors = messages.filter((m) => m.type === 'system' && m.subtype === 'error') as Array<{ error: { code: string; line: number } }>;
    expect(errors.map((e) => [e.error.code, e.error.line])).toEqual([
      ['unknown_request_id', 1],
      ['unknown_request_id', 2],
    ]);
    expect(messages.filter((m) => m.type === 'result')).toHaveLength(1);
  });

  it('an interrupt while waiting for the host cancels the request, ends the turn, and leaves no timer behind', async () => {
    const sb = makeSandbox('serve');
    const script = writeScript(sb, [
      { text: 'writing', toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: join(sb.scratch, 'x.txt'), content: 'x' } }] },
      { text: 'done' },
    ]);
    const sub = spawnMend(sb, ['--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', script], { stdin: 'pipe', timeout: 30_000 });
    const out = watchStdout(sub);
    sub.stdin!.write(`${control('i1', { subtype: 'initialize' })}\n${userLine('write it')}\n`);
    await out.waitFor((l) => l.includes('"subtype":"can_use_tool"'));
    sub.stdin!.write(`${control('x1', { subtype: 'interrupt' })}\n`);
    await out.waitFor((l) => l.includes('"type":"result"'));
    const ended = Date.now();
    sub.stdin!.end();
    const r = await finished(sub);
    expect(r.exitCode).toBe(0);
    // The 60 s approval timer must not keep the process alive.
    expect(Date.now() - ended).toBeLessThan(5_000);
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      lines.map((m) => m['type']),
      r.stdout,
    ).toContain('control_cancel_request');
    const result = lines.find((m) => m['type'] === 'result') as { is_error: boolean; error?: { code: string } };
    expect(result).toMatchObject({ is_error: true, error: { code: 'aborted' } });
  });

  it("accepts the command line Qwen Code's SDK spawns and speaks the same protocol", async () => {
    const sb = makeSandbox('serve');
    const script = writeScript(sb, [{ text: 'hello from mend' }]);
    const id = '0b9f3c2e-1111-4a2b-9c3d-123456789abc';
    const qwenArgs = [
      '--input-format',
      'stream-json',
      '--output-format',
      'stream-json',
      '--channel=SDK',
      '--model',
      'scripted',
      '--approval-mode',
      'default',
      '--include-partial-messages',
      '--session-id',
      id,
    ];
    const r = await mend(sb, [...qwenArgs, '--scripted-responses', script, '--debug'], {
      input: `${control('r1', { subtype: 'initialize' })}\n${userLine('hi')}\n`,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('ignoring --channel=SDK');
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: 'system', subtype: 'init', session_id: id });
    expect(lines.find((m) => m['type'] === 'control_response')).toMatchObject({ response: { subtype: 'success', request_id: 'r1' } });
    expect(lines.some((m) => m['type'] === 'stream_event')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'hello from mend' });
  });
});
