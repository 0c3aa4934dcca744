/**
 * MCP servers an editor passes over ACP: `session/new` (and `session/load`, the same code) carries `mcpServers`
 * (stdio, and HTTP as `initialize` advertises); the editor is asked before the tool runs, and
 * the result is in the tool call's update. The built mend with `--acp`, a real stdio server.
 */
import * as acp from '@agentclientprotocol/sdk';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, makeSandbox, writeScript } from '../support/cli.js';
import { allow, withAcp } from '../support/acp.js';
import { readCallLog, STDIO_SERVER, startHttpFixture } from '../support/mcp.js';

afterAll(cleanupSandboxes);
const m = acp.methods.agent;

describe('MCP servers from ACP sessions', () => {
  it('session/new with a stdio and an http server: advertised, asked, run, the result shown', async () => {
    const sb = makeSandbox('mcp-acp');
    const calls = join(sb.scratch, 'calls.log');
    const http = await startHttpFixture(calls);
    try {
      const script = writeScript(sb, [
        { toolCalls: [{ id: 'e1', name: 'mcp__fx__echo', args: { text: 'from zed' } }] },
        { toolCalls: [{ id: 'l1', name: 'mcp__web__lookup', args: { key: 'k' } }] },
        { text: 'both done' },
      ]);
      const servers: acp.McpServer[] = [
        {
          name: 'fx',
          command: process.execPath,
          args: [STDIO_SERVER],
          env: [
            { name: 'MCP_CALL_LOG', value: calls },
            { name: 'MCP_SERVER_NAME', value: 'fx' },
          ],
        },
        { type: 'http', name: 'web', url: http.url, headers: [] },
      ];
      const run = await withAcp(sb, { args: ['--scripted-responses', script], permission: () => allow() }, async (r) => {
        const init = await r.initialize();
        const created = await r.agent.request(m.session.new, { cwd: sb.cwd, mcpServers: servers });
        const answer = await r.agent.request(m.session.prompt, { sessionId: created.sessionId, prompt: [{ type: 'text', text: 'use them' }] });
        return { init, answer, updates: r.updatesOf(created.sessionId), permissions: [...r.permissions] };
      });
      expect(run.exitCode).toBe(0);
      const { init, answer, updates, permissions } = run.value;
      expect(init.agentCapabilities?.mcpCapabilities).toEqual({ http: true, sse: true });
      expect(answer.stopReason).toBe('end_turn');
      // echo asked (default mode); lookup too: read-only tools of a server still ask outside plan.
      expect(permissions.map((p) => p.toolCall.toolCallId)).toEqual(['e1', 'l1']);
      const finished = updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed');
      expect(JSON.stringify(finished)).toContain('echo: from zed');
      expect(JSON.stringify(finished)).toContain('k=42');
      expect(readCallLog(calls).map((c) => `${c.server}/${c.tool}`)).toEqual(['fx/echo', 'web/lookup']);
    } finally {
      http.close();
    }
  }, 120_000);
});
