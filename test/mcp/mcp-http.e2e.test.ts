/**
 * A Streamable HTTP MCP server across a crash of mend: the fixture server (MCP SDK) runs in
 * a process of its own, so it outlives mend's SIGKILL and keeps counting the calls it got.
 * The built mend, the loopback OpenAI server recording what the model is sent.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY, cleanupSandboxes, makeSandbox, mend, parseStreamJson, spawnMend, waitFor, watchStdout } from '../support/cli.js';
import { alive, mcpConfigJson, readCallLog, startHttpFixture } from '../support/mcp.js';
import { startOpenAIServer, textReply, toolCallReply, type ChatRequestBody } from '../support/openai-server.js';

afterAll(cleanupSandboxes);

describe('MCP over Streamable HTTP', () => {
  it('kill -9 while a slow HTTP MCP call runs: resume answers it once as outcome unknown naming the server; the server, still up, got one call', async () => {
    const sb = makeSandbox('mcp-http-crash');
    const calls = join(sb.scratch, 'calls.log');
    const http = await startHttpFixture(calls);
    const model = await startOpenAIServer();
    try {
      model.enqueue(toolCallReply([{ id: 'call_slow', name: 'mcp__web__slow', args: { ms: 600_000 } }]));
      const config = mcpConfigJson({ web: { type: 'http', url: http.url } });
      const args = ['-o', 'stream-json', '--mcp-config', config, '--model', 'test-model', '--base-url', model.baseURL, '--approval-mode', 'yolo'];
      const sub = spawnMend(sb, ['-p', 'go slow', ...args], { env: { OPENAI_API_KEY: API_KEY }, timeout: 60_000 });
      const out = watchStdout(sub);
      const init = JSON.parse(await out.waitFor((l) => l.includes('"subtype":"init"'), 30_000)) as {
        session_id: string;
        mcp_servers: { name: string; status: string }[];
      };
      expect(init.mcp_servers).toEqual([{ name: 'web', status: 'connected' }]);
      await waitFor(() => readCallLog(calls).some((c) => c.tool === 'slow'), 30_000, 'the slow call at the server');
      sub.kill('SIGKILL');
      expect((await sub).signal).toBe('SIGKILL');
      // The server is not mend's child: it lives on, and would take the call again if anyone sent it.
      expect(alive(http.child.pid!)).toBe(true);

      model.enqueue(textReply('checked with the server, not retrying'));
      const resumed = await mend(sb, ['--resume', init.session_id, '--continue-interrupted', ...args], {
        env: { OPENAI_API_KEY: API_KEY },
        timeout: 60_000,
      });
      expect(resumed.exitCode).toBe(0);
      const lines = parseStreamJson(resumed.stdout);
      expect(lines.find((m) => m.type === 'system' && m.subtype === 'recovery')).toMatchObject({ kind: 'interrupted_turn' });
      // The resumed run connected to the server again (its tools are offered), yet sent it no call.
      expect(lines.find((m) => m.type === 'system' && m.subtype === 'init')).toMatchObject({ mcp_servers: [{ name: 'web', status: 'connected' }] });
      const sent = (model.requests[1]!.body as ChatRequestBody).messages.filter((m) => m.role === 'tool');
      expect(sent).toHaveLength(1);
      expect(sent[0]!.tool_call_id).toBe('call_slow');
      expect(sent[0]!.content).toMatch(/outcome is unknown/i);
      expect(sent[0]!.content).toContain('MCP server "web"');
      expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'checked with the server, not retrying' });
      expect(alive(http.child.pid!)).toBe(true);
      expect(readCallLog(calls).filter((c) => c.tool === 'slow')).toHaveLength(1);
    } finally {
      await model.close();
      http.close();
    }
  }, 120_000);
});
