/**
 * MCP servers from the command line, end to end: the built mend, a real stdio server and a
 * real Streamable HTTP server (fixtures/mcp, MCP SDK), the loopback OpenAI server recording
 * what the model is sent. Calls are counted on the server side (its call log).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY, cleanupSandboxes, makeSandbox, mend, parseStreamJson, spawnMend, waitFor, watchStdout, writeScript } from '../support/cli.js';
import { startOpenAIServer, textReply, toolCallReply, type ChatRequestBody } from '../support/openai-server.js';
import { alive, mcpConfigJson, readCallLog, readRecords, startHttpFixture, stdioConfig } from '../support/mcp.js';

afterAll(cleanupSandboxes);

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const toolNames = (body: ChatRequestBody) => (body.tools ?? []).map((t) => t.function.name);
const toolMessages = (body: ChatRequestBody) => body.messages.filter((m) => m.role === 'tool');

describe('MCP servers from --mcp-config', () => {
  it('stdio: offered with its schema, asked over can_use_tool, the result reaches the model; a server that fails is listed failed', async () => {
    const sb = makeSandbox('mcp-stdio');
    const calls = join(sb.scratch, 'calls.log');
    const model = await startOpenAIServer();
    try {
      model.enqueue(toolCallReply([{ id: 'call_1', name: 'mcp__fx__echo', args: { text: 'hi' } }]), textReply('done'));
      const config = mcpConfigJson({ fx: stdioConfig('fx', calls), broken: stdioConfig('broken', calls, { args: [join(sb.scratch, 'nope.mjs')] }) });
      const sub = spawnMend(
        sb,
        ['--input-format', 'stream-json', '--output-format', 'stream-json', '--mcp-config', config, '--model', 'test-model', '--base-url', model.baseURL],
        { env: { OPENAI_API_KEY: API_KEY }, stdin: 'pipe', timeout: 60_000 },
      );
      const out = watchStdout(sub);
      sub.stdin!.write(line({ type: 'control_request', request_id: 'init_1', request: { subtype: 'initialize' } }));
      sub.stdin!.write(line({ type: 'user', message: { role: 'user', content: 'echo hi' } }));
      const ask = JSON.parse(await out.waitFor((l) => l.includes('"subtype":"can_use_tool"'), 30_000)) as {
        request_id: string;
        request: { tool_name: string; input: unknown };
      };
      expect(ask.request.tool_name).toBe('mcp__fx__echo');
      expect(ask.request.input).toEqual({ text: 'hi' });
      sub.stdin!.write(
        line({
          type: 'control_response',
          response: { subtype: 'success', request_id: ask.request_id, response: { behavior: 'allow', updatedInput: { text: 'hi' } } },
        }),
      );
      await out.waitFor((l) => l.includes('"type":"result"'), 30_000);
      sub.stdin!.end();
      const run = await sub;
      expect(run.exitCode).toBe(0);
      const messages = parseStreamJson(
        String(run.stdout)
          .split('\n')
          .filter((l) => !l.includes('"type":"control_'))
          .join('\n'),
      );
      const init = messages.find((m) => m.type === 'system' && m.subtype === 'init') as {
        mcp_servers: { name: string; status: string; error?: string }[];
        tools: string[];
      };
      expect(init.mcp_servers.find((s) => s.name === 'fx')).toEqual({ name: 'fx', status: 'connected' });
      const broken = init.mcp_servers.find((s) => s.name === 'broken');
      expect(broken?.status).toBe('failed');
      expect(broken?.error).toMatch(/nope\.mjs|Connection closed/);
      expect(init.tools).toContain('mcp__fx__echo');
      // The model was offered the tool with the server's input schema, and read its result next.
      const first = model.requests[0]!.body as ChatRequestBody;
      expect(toolNames(first)).toContain('mcp__fx__echo');
      const declared = first.tools!.find((t) => t.function.name === 'mcp__fx__echo') as unknown as {
        function: { parameters: { properties: Record<string, unknown> } };
      };
      expect(Object.keys(declared.function.parameters.properties)).toEqual(['text']);
      expect(toolMessages(model.requests[1]!.body as ChatRequestBody)).toEqual([expect.objectContaining({ tool_call_id: 'call_1', content: 'echo: hi' })]);
      expect(readCallLog(calls).filter((c) => c.tool === 'echo')).toHaveLength(1);
      // Recorded like any call: the result record keeps the server's content blocks.
      const result = readRecords(sb).find((r) => r.type === 'tool_result');
      expect(JSON.stringify(result)).toContain('"mcp":{"server":"fx","tool":"echo"');
    } finally {
      await model.close();
    }
  }, 90_000);

  it('approval rules: plan runs only read-only tools; --allowedTools names a tool or a whole server; default without a rule refuses headless', async () => {
    const sb = makeSandbox('mcp-rules');
    const calls = join(sb.scratch, 'calls.log');
    const config = mcpConfigJson({ fx: stdioConfig('fx', calls) });
    const both = [
      { id: 'e1', name: 'mcp__fx__echo', args: { text: 'x' } },
      { id: 'l1', name: 'mcp__fx__lookup', args: { key: 'k' } },
    ];
    const script = writeScript(sb, [{ toolCalls: both }, { text: 'ok' }]);
    const run = (extra: string[]) =>
      mend(sb, ['-p', 'go', '-o', 'stream-json', '--scripted-responses', script, '--mcp-config', config, ...extra], { timeout: 60_000 });
    const results = (stdout: string) =>
      parseStreamJson(stdout)
        .filter((m) => m.type === 'user')
        .flatMap((m) => (m as { message: { content: { tool_use_id: string; is_error: boolean; content: string }[] } }).message.content);

    const plan = results((await run(['--approval-mode', 'plan'])).stdout);
    expect(plan.find((r) => r.tool_use_id === 'e1')).toMatchObject({ is_error: true });
    expect(plan.find((r) => r.tool_use_id === 'l1')).toMatchObject({ is_error: false, content: 'k=42' });

    const headless = results((await run([])).stdout);
    expect(headless.find((r) => r.tool_use_id === 'e1')?.content).toMatch(/needs approval/);
    expect(headless.find((r) => r.tool_use_id === 'l1')?.content).toMatch(/needs approval/);

    const byServer = results((await run(['--allowedTools', 'mcp__fx'])).stdout);
    expect(byServer.every((r) => !r.is_error)).toBe(true);
    const byTool = results((await run(['--allowedTools', 'mcp__fx__lookup'])).stdout);
    expect(byTool.find((r) => r.tool_use_id === 'e1')?.is_error).toBe(true);
    expect(byTool.find((r) => r.tool_use_id === 'l1')?.is_error).toBe(false);
    // Only the calls that were allowed reached the server: plan's lookup, both by server, lookup by tool.
    expect(readCallLog(calls).map((c) => c.tool)).toEqual(['lookup', 'echo', 'lookup', 'lookup']);
  }, 120_000);

  it('a hung call ends at the server timeout (cancelled on the server), a server that dies ends its call with an error; the turn goes on', async () => {
    const sb = makeSandbox('mcp-timeout');
    const calls = join(sb.scratch, 'calls.log');
    const config = mcpConfigJson({ fx: stdioConfig('fx', calls, { timeout: 1500 }) });
    const script = writeScript(sb, [
      { toolCalls: [{ id: 's1', name: 'mcp__fx__slow', args: { ms: 120_000 } }] },
      { toolCalls: [{ id: 'd1', name: 'mcp__fx__die', args: {} }] },
      { toolCalls: [{ id: 'e1', name: 'mcp__fx__echo', args: { text: 'after' } }] },
      { text: 'finished' },
    ]);
    const run = await mend(sb, ['-p', 'go', '-o', 'stream-json', '--scripted-responses', script, '--mcp-config', config, '--approval-mode', 'yolo'], {
      timeout: 60_000,
    });
    expect(run.exitCode).toBe(0);
    const out = parseStreamJson(run.stdout);
    const results = out
      .filter((m) => m.type === 'user')
      .flatMap((m) => (m as { message: { content: { tool_use_id: string; is_error: boolean; content: string }[] } }).message.content);
    expect(results.find((r) => r.tool_use_id === 's1')).toMatchObject({ is_error: true });
    expect(results.find((r) => r.tool_use_id === 's1')?.content).toMatch(/did not answer slow within 1500 ms/);
    expect(results.find((r) => r.tool_use_id === 'd1')?.content).toMatch(/stopped while running die/);
    // The server is gone: the next call says so instead of hanging.
    expect(results.find((r) => r.tool_use_id === 'e1')?.content).toMatch(/not connected/);
    expect(out.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
    await waitFor(() => readCallLog(calls).some((c) => c.cancelled === 'slow'), 5000, 'the cancellation at the server');
  }, 90_000);

  it('kill -9 while a slow MCP call runs: the server dies with mend; resume answers the call once as outcome unknown naming the server, never calling it again', async () => {
    const sb = makeSandbox('mcp-crash');
    const calls = join(sb.scratch, 'calls.log');
    const config = mcpConfigJson({ fx: stdioConfig('fx', calls) });
    const model = await startOpenAIServer();
    try {
      model.enqueue(toolCallReply([{ id: 'call_slow', name: 'mcp__fx__slow', args: { ms: 600_000 } }]));
      const args = ['-o', 'stream-json', '--mcp-config', config, '--model', 'test-model', '--base-url', model.baseURL, '--approval-mode', 'yolo'];
      const sub = spawnMend(sb, ['-p', 'go slow', ...args], { env: { OPENAI_API_KEY: API_KEY }, timeout: 60_000 });
      const out = watchStdout(sub);
      const init = JSON.parse(await out.waitFor((l) => l.includes('"subtype":"init"'), 30_000)) as { session_id: string };
      await waitFor(() => readCallLog(calls).some((c) => c.tool === 'slow'), 30_000, 'the slow call at the server');
      const serverPid = readCallLog(calls).find((c) => c.tool === 'slow')!.pid!;
      sub.kill('SIGKILL');
      await sub;
      // PR_SET_PDEATHSIG (setpriv): the server does not outlive mend's SIGKILL.
      await waitFor(() => !alive(serverPid), 10_000, 'the server to die with mend');

      model.enqueue(textReply('checked, not retrying'));
      const resumed = await mend(sb, ['--resume', init.session_id, '--continue-interrupted', ...args], { env: { OPENAI_API_KEY: API_KEY }, timeout: 60_000 });
      expect(resumed.exitCode).toBe(0);
      const lines = parseStreamJson(resumed.stdout);
      expect(lines.find((m) => m.type === 'system' && m.subtype === 'recovery')).toMatchObject({ kind: 'interrupted_turn' });
      const sent = toolMessages(model.requests[1]!.body as ChatRequestBody);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.tool_call_id).toBe('call_slow');
      expect(sent[0]!.content).toMatch(/outcome is unknown/i);
      expect(sent[0]!.content).toContain('MCP server "fx"');
      expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'checked, not retrying' });
      // Exactly one call ever reached the server.
      expect(readCallLog(calls).filter((c) => c.tool === 'slow')).toHaveLength(1);
    } finally {
      await model.close();
    }
  }, 120_000);

  it('tools/list_changed: a tool the server adds is offered at the next model request and runs', async () => {
    const sb = makeSandbox('mcp-changed');
    const calls = join(sb.scratch, 'calls.log');
    const model = await startOpenAIServer();
    try {
      model.enqueue(
        toolCallReply([{ id: 'g1', name: 'mcp__fx__grow', args: {} }]),
        toolCallReply([{ id: 'x1', name: 'mcp__fx__extra', args: {} }]),
        textReply('done'),
      );
      const config = mcpConfigJson({ fx: stdioConfig('fx', calls) });
      const run = await mend(
        sb,
        ['-p', 'grow', '-o', 'stream-json', '--mcp-config', config, '--model', 'test-model', '--base-url', model.baseURL, '--allowedTools', 'mcp__fx'],
        { env: { OPENAI_API_KEY: API_KEY }, timeout: 60_000 },
      );
      expect(run.exitCode).toBe(0);
      expect(toolNames(model.requests[0]!.body as ChatRequestBody)).not.toContain('mcp__fx__extra');
      expect(toolNames(model.requests[1]!.body as ChatRequestBody)).toContain('mcp__fx__extra');
      expect(toolMessages(model.requests[2]!.body as ChatRequestBody).at(-1)).toMatchObject({ tool_call_id: 'x1', content: 'extra ran' });
    } finally {
      await model.close();
    }
  }, 90_000);

  it('Streamable HTTP from the settings file (Qwen shape), with headers; --allowed-mcp-server-names filters', async () => {
    const sb = makeSandbox('mcp-http');
    const calls = join(sb.scratch, 'calls.log');
    const http = await startHttpFixture(calls, { MCP_REQUIRE_HEADER: 'tok-1' });
    try {
      mkdirSync(sb.home, { recursive: true });
      writeFileSync(
        join(sb.home, 'settings.json'),
        JSON.stringify({ mcpServers: { web: { httpUrl: http.url, headers: { 'x-test-token': 'tok-1' } }, other: stdioConfig('other', calls) } }),
      );
      const script = writeScript(sb, [{ toolCalls: [{ id: 'p1', name: 'mcp__web__picture', args: {} }] }, { text: 'seen' }]);
      const run = await mend(
        sb,
        ['-p', 'go', '-o', 'stream-json', '--scripted-responses', script, '--allowed-mcp-server-names', 'web', '--approval-mode', 'yolo'],
        {
          timeout: 60_000,
        },
      );
      expect(run.exitCode).toBe(0);
      const out = parseStreamJson(run.stdout);
      expect(out[0]).toMatchObject({ type: 'system', subtype: 'init', mcp_servers: [{ name: 'web', status: 'connected' }] });
      const result = out.filter((m) => m.type === 'user').flatMap((m) => (m as { message: { content: { content: string }[] } }).message.content)[0];
      expect(result?.content).toMatch(/a pixel\n\[image image\/png, \d+ bytes\]/);
      // The image itself is in the record.
      expect(JSON.stringify(readRecords(sb).find((r) => r.type === 'tool_result'))).toMatch(/"type":"image","data":"iVBOR[^"]+","mimeType":"image\/png"/);
      expect(readCallLog(calls).map((c) => `${c.server}/${c.tool}`)).toEqual(['web/picture']);
    } finally {
      http.close();
    }
  }, 90_000);
});
