/**
 * Everyday use against the loopback OpenAI-compatible server and the scripted
 * model, through the built CLI: the system prompt and its overrides, the project
 * boundary, tool arguments that are not JSON, the tools' environment, and values
 * that must never become flags.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../src/sdk/index.js';
import { API_KEY, cleanupSandboxes, makeSandbox, mend, readLog, sessionFiles, transcript, writeScript } from '../support/cli.js';
import { chunkOf, startOpenAIServer, textReply, usageChunk, type OpenAIServer } from '../support/openai-server.js';

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
  cleanupSandboxes();
});

const openaiEnv = () => ({ OPENAI_API_KEY: API_KEY, OPENAI_MODEL: 'test-model', OPENAI_BASE_URL: server.baseURL, MEND_OPENAI_MAX_RETRIES: '0' });

describe('the system prompt', () => {
  it('--system-prompt replaces it and --append-system-prompt extends it', async () => {
    const sb = makeSandbox('sysprompt');
    const before = server.requests.length;
    server.enqueue(textReply('ok'), textReply('ok'));
    const replaced = await mend(sb, ['-p', 'hi', '-o', 'stream-json', '--system-prompt', 'You are terse.'], { env: openaiEnv() });
    expect(replaced.exitCode).toBe(0);
    const appended = await mend(sb, ['-p', 'hi', '-o', 'stream-json', '--append-system-prompt', 'Answer in French.'], { env: openaiEnv() });
    expect(appended.exitCode).toBe(0);
    const [a, b] = server.requests.slice(before).map((r) => r.body.messages[0]!);
    expect(a).toEqual({ role: 'system', content: 'You are terse.' });
    expect(b!.role).toBe('system');
    expect(b!.content).toContain(`Project root: ${sb.cwd}`);
    expect(b!.content!.endsWith('\n\nAnswer in French.')).toBe(true);
  });
});

describe('the project boundary', () => {
  it('a relative path is read from the project root; a file outside it is refused even in yolo; --add-dir widens it', async () => {
    const sb = makeSandbox('boundary');
    writeFileSync(join(sb.cwd, 'README.md'), 'project readme\n');
    const outside = join(sb.scratch, 'outside.txt');
    const extra = join(sb.scratch, 'extra');
    mkdirSync(extra);
    const script = writeScript(sb, [
      {
        toolCalls: [
          { id: 'r1', name: 'read_file', args: { file_path: 'README.md' } },
          { id: 'w1', name: 'write_file', args: { file_path: outside, content: 'x' } },
          { id: 'w2', name: 'write_file', args: { file_path: join(extra, 'ok.txt'), content: 'y' } },
        ],
      },
      { text: 'done' },
    ]);
    const r = await mend(sb, ['-p', 'go', '-o', 'stream-json', '--approval-mode', 'yolo', '--scripted-responses', script, '--add-dir', extra]);
    expect(r.exitCode).toBe(0);
    const results = transcript(r.stdout).users.flatMap((u) => u.message.content as Array<{ tool_use_id: string; is_error: boolean; content: string }>);
    expect(results.find((x) => x.tool_use_id === 'r1')).toMatchObject({ is_error: false, content: expect.stringContaining('project readme') });
    expect(results.find((x) => x.tool_use_id === 'w1')).toMatchObject({ is_error: true });
    expect(existsSync(outside)).toBe(false);
    expect(results.find((x) => x.tool_use_id === 'w2')).toMatchObject({ is_error: false });
    expect(readFileSync(join(extra, 'ok.txt'), 'utf8')).toBe('y');
  });
});

describe('tool calls whose arguments are not JSON', () => {
  it('are not run; the raw text is recorded and the model is told', async () => {
    const sb = makeSandbox('badargs');
    const marker = join(sb.scratch, 'ran');
    const before = server.requests.length;
    server.enqueue(
      {
        type: 'sse',
        events: [
          chunkOf({ role: 'assistant', content: null }),
          chunkOf({
            tool_calls: [{ index: 0, id: 'bad1', type: 'function', function: { name: 'run_shell_command', arguments: `{"command": "touch ${marker}"` } }],
          }),
          chunkOf({}, 'tool_calls'),
          usageChunk(10, 5),
        ],
      },
      textReply('sorry'),
    );
    const r = await mend(sb, ['-p', 'go', '-o', 'stream-json', '--approval-mode', 'yolo'], { env: openaiEnv() });
    expect(r.exitCode).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const second = server.requests[before + 1]!.body.messages;
    const tool = second.find((m) => m.role === 'tool')!;
    expect(tool.content).toContain('were not valid JSON');
    const assistant = second.find((m) => m.role === 'assistant')!;
    expect(assistant.tool_calls![0]!.function.arguments).toBe(`{"command": "touch ${marker}"`);
    const [log] = sessionFiles(sb);
    const call = readLog(log!).find((rec) => rec.type === 'assistant')!;
    expect(JSON.stringify(call)).toContain('rawArgs');
  });
});

describe("the tools' environment", () => {
  it("a shell command sees neither mend's API key nor variables named like secrets, and its output is redacted", async () => {
    const sb = makeSandbox('toolenv');
    const before = server.requests.length;
    server.enqueue(
      {
        type: 'sse',
        events: [
          chunkOf({ role: 'assistant', content: null }),
          chunkOf({
            tool_calls: [
              {
                index: 0,
                id: 'e1',
                type: 'function',
                function: {
                  name: 'run_shell_command',
                  arguments: JSON.stringify({
                    command: 'echo "key=$OPENAI_API_KEY gh=$GITHUB_TOKEN ok=$HARMLESS"; cat /proc/$PPID/environ | tr "\\0" "\\n" | grep OPENAI || true',
                  }),
                },
              },
            ],
          }),
          chunkOf({}, 'tool_calls'),
          usageChunk(10, 5),
        ],
      },
      textReply('done'),
    );
    const r = await mend(sb, ['-p', 'go', '-o', 'stream-json', '--approval-mode', 'yolo'], {
      env: { ...openaiEnv(), GITHUB_TOKEN: 'ghp_supersecret123', HARMLESS: 'visible' },
    });
    expect(r.exitCode).toBe(0);
    const tool = server.requests[before + 1]!.body.messages.find((m) => m.role === 'tool')!;
    expect(tool.content).toContain('ok=visible');
    expect(tool.content).toContain('key= gh= ');
    expect(tool.content).not.toContain(API_KEY);
    expect(tool.content).not.toContain('ghp_supersecret123');
    expect(r.stdout).not.toContain(API_KEY);
    const [log] = sessionFiles(sb);
    expect(readFileSync(log!, 'utf8')).not.toContain(API_KEY);
  });
});

describe('values that look like flags', () => {
  it('the SDK cannot smuggle a flag in an option value, and the CLI refuses flag-like values', async () => {
    const sb = makeSandbox('inject');
    const q = query({ prompt: 'hi', options: { cwd: sb.cwd, env: { MEND_HOME: sb.home }, model: '--approval-mode=yolo' } });
    const messages: Array<Record<string, unknown>> = [];
    await expect(
      (async () => {
        for await (const m of q) messages.push(m as Record<string, unknown>);
      })(),
    ).rejects.toMatchObject({ code: 'usage', exitCode: 2 });
    expect(messages.at(-1)).toMatchObject({ type: 'result', is_error: true, error: { code: 'usage' } });
    const cli = await mend(sb, ['-p', 'x', '-o', 'stream-json', '--base-url', '--approval-mode=yolo']);
    expect(cli.exitCode).toBe(2);
  });

  it('a repeated --approval-mode takes the last value and keeps plan read-only', async () => {
    const sb = makeSandbox('dup');
    const marker = join(sb.scratch, 'pwned');
    const script = writeScript(sb, [{ toolCalls: [{ id: 's1', name: 'run_shell_command', args: { command: `touch ${marker}` } }] }, { text: 'done' }]);
    const r = await mend(sb, ['-p', 'x', '-o', 'stream-json', '--approval-mode', 'plan', '--approval-mode', 'plan', '--scripted-responses', script]);
    expect(r.exitCode).toBe(0);
    expect(transcript(r.stdout).init.permission_mode).toBe('plan');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('small ones', () => {
  it('a prompt over the record cap is cut with a warning line; an unknown --allowed-tools name warns; tools can be excluded', async () => {
    const sb = makeSandbox('warn');
    const script = writeScript(sb, [{ text: 'ok' }]);
    const big = 'x'.repeat(1024 * 1024 + 10);
    const r = await mend(
      sb,
      ['-p', '-', '-o', 'stream-json', '--scripted-responses', script, '--allowed-tools', 'WebFetch', '--exclude-tools', 'run_shell_command'],
      { input: big },
    );
    expect(r.exitCode).toBe(0);
    const t = transcript(r.stdout);
    const warnings = t.messages.filter((m) => m.type === 'system' && (m as { subtype: string }).subtype === 'warning') as Array<{ warning: { code: string } }>;
    expect(warnings.map((w) => w.warning.code).sort()).toEqual(['prompt_truncated', 'unknown_tool']);
    expect(t.init.tools).not.toContain('run_shell_command');
    const text = await mend(sb, ['-p', '-', '--scripted-responses', writeScript(sb, [{ text: 'ok' }])], { input: big });
    expect(text.stderr).toContain('mend: warning:');
  });
});

describe('separate text parts stay separate', () => {
  it('two stream-json text blocks reach the model as separate content parts, not glued', async () => {
    const sb = makeSandbox('parts');
    const before = server.requests.length;
    server.enqueue(textReply('ok'));
    const line = JSON.stringify({
      type: 'user',
      session_id: '',
      message: {
        role: 'user',
        content: [
          { type: 'text', text: 'Line one.' },
          { type: 'text', text: 'Line two.' },
        ],
      },
      parent_tool_use_id: null,
    });
    const r = await mend(sb, ['--input-format', 'stream-json', '-o', 'stream-json'], { env: openaiEnv(), input: `${line}\n` });
    expect(r.exitCode).toBe(0);
    const userMessage = server.requests[before]!.body.messages.find((m) => m.role === 'user')!;
    expect(userMessage.content).toEqual([
      { type: 'text', text: 'Line one.' },
      { type: 'text', text: 'Line two.' },
    ]);
  });
});

describe('limits', () => {
  it('a response with more calls than the cap runs only the cap; the rest get an error result the model reads', async () => {
    const sb = makeSandbox('callcap');
    const calls = Array.from({ length: 130 }, (_, i) => ({ id: `c${i}`, name: 'list_directory', args: { path: '.' } }));
    const r = await mend(sb, ['-p', 'go', '-o', 'stream-json', '--scripted-responses', writeScript(sb, [{ toolCalls: calls }, { text: 'done' }])]);
    expect(r.exitCode).toBe(0);
    const results = transcript(r.stdout).users.flatMap((u) => u.message.content as Array<{ tool_use_id: string; is_error: boolean; content: string }>);
    expect(results).toHaveLength(130);
    expect(results.filter((x) => x.is_error).map((x) => x.tool_use_id)).toEqual(['c128', 'c129']);
    expect(results.at(-1)!.content).toContain('at most 128 tool calls');
  });

  it('a 12 MB write_file: the host sees the call (input cut with a marker, every line under the cap) and its result', async () => {
    const sb = makeSandbox('bigwrite');
    const content = 'z'.repeat(12 * 1024 * 1024);
    const script = writeScript(sb, [
      { toolCalls: [{ id: 'w1', name: 'write_file', args: { file_path: 'big.txt', content } }], chunkSize: 1024 * 1024 },
      { text: 'written' },
    ]);
    const r = await mend(sb, ['-p', 'go', '-o', 'stream-json', '--approval-mode', 'auto-edit', '--scripted-responses', script], { timeout: 60_000 });
    expect(r.exitCode).toBe(0);
    for (const line of r.stdout.split('\n')) expect(Buffer.byteLength(line)).toBeLessThan(10 * 1024 * 1024);
    const t = transcript(r.stdout);
    // Arguments over the 1 MiB cap are kept as a capped prefix and the call is not run; the host sees it marked.
    const use = t.assistants.flatMap((a) => a.message.content).find((b) => b.type === 'tool_use') as { input: Record<string, unknown> } | undefined;
    expect(use?.input).toMatchObject({ mend_invalid_arguments: expect.stringContaining('bytes') });
    expect(t.users.flatMap((u) => u.message.content as Array<Record<string, unknown>>)).toEqual([
      expect.objectContaining({ tool_use_id: 'w1', is_error: true }),
    ]);
    expect(t.result).toMatchObject({ subtype: 'success', result: 'written' });
    const [log] = sessionFiles(sb);
    for (const line of readFileSync(log!, 'utf8').split('\n')) expect(Buffer.byteLength(line)).toBeLessThan(2 * 1024 * 1024);
  });

  it('a connection refused names the server URL, never the key', async () => {
    const sb = makeSandbox('refused');
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const url = `http://127.0.0.1:${port}/v1`;
    const r = await mend(sb, ['-p', 'go', '-o', 'stream-json'], {
      env: { OPENAI_API_KEY: API_KEY, OPENAI_MODEL: 'm', OPENAI_BASE_URL: url, MEND_OPENAI_MAX_RETRIES: '0' },
    });
    expect(r.exitCode).toBe(1);
    const error = transcript(r.stdout).result.error!;
    expect(error.message).toContain(url);
    expect(error.message).toContain('refused');
    expect(r.stdout).not.toContain(API_KEY);
  });
});
