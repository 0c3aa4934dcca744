/**
 * Claude Agent SDK options against the built mend (flag table): what mend
 * implements (system prompt, tools, disallowed tools and shell rules, images, resume over
 * continue, debug file), what it accepts and ignores, what it refuses readably. The model is
 * the loopback OpenAI server where the request itself is the evidence, else the script.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, cleanupSandboxes, makeSandbox, writeScript } from '../../support/cli.js';
import { errorReply, startOpenAIServer, textReply, type OpenAIServer } from '../../support/openai-server.js';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { claudeOptions, collectAll, runClaude, type SDKMessage } from './helpers.js';

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
  cleanupSandboxes();
});

const openaiEnv = () => ({ OPENAI_API_KEY: API_KEY, OPENAI_MODEL: 'test-model', OPENAI_BASE_URL: server.baseURL, MEND_OPENAI_MAX_RETRIES: '0' });
const results = (messages: SDKMessage[]) => messages.filter((m) => m.type === 'result');
/** The requests the server got whose first user message says `marker` (tests run one after another here). */
const requestsSaying = (marker: string) => server.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));

describe('Claude SDK options mend implements', () => {
  it("initialize's systemPrompt replaces mend's; tools and disallowedTools (Claude names) filter what the model is offered", async () => {
    const sb = makeSandbox('claude-sys');
    server.enqueue(textReply('ok'));
    const { messages, error } = await collectAll(
      runClaude(sb, 'marker-sys-1', undefined, {
        envExtra: openaiEnv(),
        systemPrompt: 'You are terse.',
        tools: ['Read', 'Bash', 'Grep'],
        disallowedTools: ['Bash'],
      }),
    );
    expect(error).toBeUndefined();
    expect(messages[0]).toMatchObject({ tools: ['read_file', 'grep_search'] });
    const [request] = requestsSaying('marker-sys-1');
    expect(request!.body.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
    expect(request!.body.tools?.map((t) => t.function.name)).toEqual(['read_file', 'grep_search']);
  });

  it("the claude_code preset keeps mend's prompt and appends the host's text; tools 'default' offers every tool", async () => {
    const sb = makeSandbox('claude-append');
    server.enqueue(textReply('ok'));
    const { error, messages } = await collectAll(
      runClaude(sb, 'marker-append-1', undefined, {
        envExtra: openaiEnv(),
        systemPrompt: { type: 'preset', preset: 'claude_code', append: 'Answer in French.' },
        tools: { type: 'preset', preset: 'claude_code' },
      }),
    );
    expect(error).toBeUndefined();
    expect((messages[0] as { tools: string[] }).tools).toContain('run_shell_command');
    const system = requestsSaying('marker-append-1')[0]!.body.messages[0]!;
    expect(system.content).toContain(`Project root: ${sb.cwd}`);
    expect(system.content!.endsWith('\n\nAnswer in French.')).toBe(true);
  });

  it('an image-only user message is sent (as image_url), not dropped', async () => {
    const sb = makeSandbox('claude-image');
    server.enqueue(textReply('a tiny png'));
    async function* prompt() {
      yield {
        type: 'user' as const,
        session_id: '',
        parent_tool_use_id: null,
        message: {
          role: 'user' as const,
          content: [{ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'aW1hZ2UtbWFya2Vy' } }],
        },
      };
    }
    const { messages, error } = await collectAll(query({ prompt: prompt(), options: claudeOptions(sb, undefined, { envExtra: openaiEnv() }) }));
    expect(error).toBeUndefined();
    expect(results(messages)).toMatchObject([{ subtype: 'success', result: 'a tiny png' }]);
    expect(requestsSaying('aW1hZ2UtbWFya2Vy')).toHaveLength(1);
    expect(JSON.stringify(requestsSaying('aW1hZ2UtbWFya2Vy')[0]!.body.messages)).toContain('image_url');
  });

  it('Bash(prefix:*) rules: allowed ones run unasked, disallowed ones are refused even in bypassPermissions', async () => {
    const sb = makeSandbox('claude-rules');
    const touched = join(sb.scratch, 'touched');
    const removed = join(sb.scratch, 'keep');
    writeFileSync(removed, 'x');
    const script = writeScript(sb, [
      {
        toolCalls: [
          { id: 't1', name: 'run_shell_command', args: { command: `touch ${touched}` } },
          { id: 'r1', name: 'run_shell_command', args: { command: `rm ${removed}` } },
        ],
      },
      { text: 'done' },
    ]);
    const allowed = await collectAll(runClaude(sb, 'go', script, { allowedTools: ['Bash(touch:*)'] }));
    expect(allowed.error).toBeUndefined();
    expect(existsSync(touched)).toBe(true);
    expect(existsSync(removed)).toBe(true);
    expect(results(allowed.messages)).toMatchObject([{ permission_denials: [{ tool_use_id: 'r1' }] }]);

    const sb2 = makeSandbox('claude-rules-deny');
    const kept = join(sb2.scratch, 'keep');
    writeFileSync(kept, 'x');
    const script2 = writeScript(sb2, [{ toolCalls: [{ id: 'r1', name: 'run_shell_command', args: { command: `rm ${kept}` } }] }, { text: 'done' }]);
    const denied = await collectAll(
      runClaude(sb2, 'go', script2, { permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true, disallowedTools: ['Bash(rm:*)'] }),
    );
    expect(denied.error).toBeUndefined();
    expect(existsSync(kept)).toBe(true);
  });

  it("additionalDirectories (--add-dir=) widens the file tools' boundary", async () => {
    const sb = makeSandbox('claude-adddir');
    const outside = join(sb.scratch, 'notes.txt');
    writeFileSync(outside, 'from outside the project');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'r1', name: 'read_file', args: { file_path: outside } }] }, { text: 'read' }]);
    const run = async (extra: Parameters<typeof runClaude>[3]) => {
      const { messages } = await collectAll(runClaude(sb, 'read it', script, extra));
      const user = messages.find((m) => m.type === 'user') as { message: { content: Array<{ is_error: boolean; content: string }> } } | undefined;
      return user!.message.content[0]!;
    };
    expect(await run({ additionalDirectories: [sb.scratch] })).toMatchObject({ is_error: false, content: expect.stringContaining('from outside the project') });
    expect((await run({})).is_error).toBe(true);
  });

  it('persistSession: false runs the prompt and keeps nothing in MEND_HOME', async () => {
    const sb = makeSandbox('claude-ephemeral');
    const { messages, error } = await collectAll(runClaude(sb, 'hi', writeScript(sb, [{ text: 'gone after' }]), { persistSession: false }));
    expect(error).toBeUndefined();
    expect(results(messages)).toMatchObject([{ result: 'gone after' }]);
    expect(existsSync(sb.home)).toBe(false);
  });

  it('fallbackModel answers when the main model fails before any output', async () => {
    const sb = makeSandbox('claude-fallback');
    server.enqueue(errorReply(500, { error: { message: 'overloaded' } }), textReply('from the fallback'));
    const before = server.requests.length;
    const { messages, error } = await collectAll(
      runClaude(sb, 'marker-fallback-1', undefined, { envExtra: openaiEnv(), model: 'test-model', fallbackModel: 'fallback-model' }),
    );
    expect(error).toBeUndefined();
    expect(results(messages)).toMatchObject([{ subtype: 'success', result: 'from the fallback' }]);
    expect(server.requests.slice(before).map((r) => r.body.model)).toEqual(['test-model', 'fallback-model']);
  });

  it('with continue and resume both set, resume wins', async () => {
    const sb = makeSandbox('claude-resume');
    const script = writeScript(sb, [{ text: 'first' }, { text: 'second' }]);
    const first = await collectAll(runClaude(sb, 'one', script));
    const sessionId = first.messages[0]!.session_id;
    const second = await collectAll(runClaude(sb, 'two', script, { continue: true, resume: sessionId }));
    expect(second.error).toBeUndefined();
    expect(second.messages[0]).toMatchObject({ session_id: sessionId, resumed: true });
    expect(results(second.messages)).toMatchObject([{ result: 'second' }]);
  });
});

describe('Claude SDK options mend accepts and ignores, or refuses', () => {
  it('every ignorable option at once: the query runs; the debug file names what was ignored; MCP servers are reported not applied', async () => {
    const sb = makeSandbox('claude-ignored');
    const debugFile = join(sb.scratch, 'debug.log');
    const { messages, error } = await collectAll(
      runClaude(sb, 'hi', writeScript(sb, [{ text: 'fine' }]), {
        thinking: { type: 'adaptive' },
        maxThinkingTokens: 1000,
        effort: 'low',
        maxBudgetUsd: 1,
        betas: ['context-1m-2025-08-07'],
        settingSources: [],
        fallbackModel: 'other-model',
        includeHookEvents: true,
        strictMcpConfig: true,
        additionalDirectories: [sb.scratch],
        mcpServers: { none: { type: 'stdio', command: 'true' } },
        settings: { model: 'x' },
        debugFile,
        maxTurns: 5,
        includePartialMessages: true,
      }),
    );
    expect(error).toBeUndefined();
    expect(results(messages)).toMatchObject([{ subtype: 'success', result: 'fine' }]);
    const debug = readFileSync(debugFile, 'utf8');
    for (const flag of ['--thinking', '--effort', '--max-budget-usd', '--setting-sources', '--await-initialize']) expect(debug).toContain(`ignoring ${flag}`);
  });

  it("options mend cannot honour end the query with mend's readable message", async () => {
    const sb = makeSandbox('claude-refused');
    const script = writeScript(sb, [{ text: 'never' }]);
    const schema = await collectAll(runClaude(sb, 'hi', script, { outputFormat: { type: 'json_schema', schema: { type: 'object' } } }));
    expect(schema.error?.message).toMatch(/structured output/);
    const pattern = await collectAll(runClaude(sb, 'hi', script, { allowedTools: ['Read(./src/**)'] }));
    expect(pattern.error?.message).toMatch(/pattern mend cannot apply/);
    const tool = await collectAll(runClaude(sb, 'hi', script, { permissionPromptToolName: 'mcp__perm__ask' }));
    expect(tool.error?.message).toMatch(/permission-prompt-tool/);
  });
});

describe("permissionMode 'dontAsk'", () => {
  it('never asks canUseTool: what is not pre-approved is denied, what is allowed runs', async () => {
    const sb = makeSandbox('claude-dontask');
    const file = join(sb.cwd, 'd.txt');
    const marker = join(sb.scratch, 'ok');
    const script = writeScript(sb, [
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', args: { file_path: file, content: 'd' } },
          { id: 's1', name: 'run_shell_command', args: { command: `touch ${marker}` } },
        ],
      },
      { text: 'done' },
    ]);
    const asked: string[] = [];
    const { messages, error } = await collectAll(
      runClaude(sb, 'go', script, {
        permissionMode: 'dontAsk',
        allowedTools: ['Bash(touch:*)'],
        canUseTool: async (name, input) => {
          asked.push(name);
          return { behavior: 'allow', updatedInput: input };
        },
      }),
    );
    expect(error).toBeUndefined();
    expect(asked).toEqual([]);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(marker)).toBe(true);
    expect(messages[0]).toMatchObject({ permissionMode: 'dontAsk' });
    expect(results(messages)).toMatchObject([{ permission_denials: [{ tool_name: 'write_file' }] }]);
  });
});
