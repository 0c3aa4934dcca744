/**
 * MCP servers of daemon sessions, end to end through the built `mend serve` over HTTP: a
 * session created with `mcpServers` (the fixture stdio server, and one that cannot start),
 * the settings file's servers beside them, the tool offered as mcp__<server>__<tool>, the
 * approval asked over the daemon's permission flow, the result read by the model (the
 * loopback OpenAI server), the call counted on the server; the servers' process groups end
 * with the session (DELETE) and with the daemon (SIGTERM). A bad entry is a 400 with its code.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonClient } from '@qwen-code/sdk/daemon';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY, cleanupSandboxes, makeSandbox, waitFor, writeScript } from '../support/cli.js';
import { connect, type SDKMessage } from '../../src/sdk/index.js';
import { alive, readCallLog, STDIO_SERVER, stdioConfig } from '../support/mcp.js';
import { startOpenAIServer, textReply, toolCallReply, type ChatRequestBody } from '../support/openai-server.js';
import { call, startDaemon, stopAllDaemons } from '../frontends/daemon/helpers.js';

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

type Event = { id?: number; type: string; data: Record<string, unknown> };
type ServerStatus = { name: string; status: string; error?: string };

/** Pids of the fixture MCP servers `parent` started (read from /proc). */
function serverChildren(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(STDIO_SERVER)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

async function settledServers(url: string, sessionId: string): Promise<ServerStatus[]> {
  let servers: ServerStatus[] = [];
  for (let i = 0; i < 300; i++) {
    const context = await call<{ mcpServers: ServerStatus[] }>(url, `/session/${sessionId}/context`);
    servers = context.body.mcpServers;
    if (servers.every((s) => s.status !== 'pending')) return servers;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`servers still pending: ${JSON.stringify(servers)}`);
}

describe('MCP servers of daemon sessions (mend serve)', () => {
  it('POST /session mcpServers + the settings file: listed with status, the tool asked over the permission flow, the result reaches the model; stopped on DELETE and on exit', async () => {
    const sb = makeSandbox('mcp-daemon');
    const calls = join(sb.scratch, 'calls.log');
    mkdirSync(sb.home, { recursive: true });
    writeFileSync(join(sb.home, 'settings.json'), JSON.stringify({ mcpServers: { cfg: stdioConfig('cfg', calls) } }));
    const model = await startOpenAIServer();
    const daemon = await startDaemon(sb, { args: ['--model', 'test-model', '--base-url', model.baseURL], env: { OPENAI_API_KEY: API_KEY } });
    try {
      model.enqueue(toolCallReply([{ id: 'call_1', name: 'mcp__fx__echo', args: { text: 'hi' } }]), textReply('done'));
      const sessionId = randomUUID();
      const created = await call<{ mcpServers: ServerStatus[]; state: { _meta: { mend: { messages: { tools?: string[] }[] } } } }>(daemon.url, '/session', {
        body: { sessionId, mcpServers: { fx: stdioConfig('fx', calls), broken: stdioConfig('broken', calls, { args: [join(sb.scratch, 'nope.mjs')] }) } },
      });
      expect(created.status).toBe(200);
      expect(created.body.mcpServers.map((s) => s.name).sort()).toEqual(['broken', 'cfg', 'fx']);

      const servers = await settledServers(daemon.url, sessionId);
      expect(servers.find((s) => s.name === 'fx')).toEqual({ name: 'fx', status: 'connected' });
      expect(servers.find((s) => s.name === 'cfg')).toEqual({ name: 'cfg', status: 'connected' });
      const broken = servers.find((s) => s.name === 'broken');
      expect(broken?.status).toBe('failed');
      expect(broken?.error).toMatch(/nope\.mjs|Connection closed/);
      // The init line of the session state lists the tools, the MCP ones under their mcp__ names.
      const context = await call<{ state: { _meta: { mend: { messages: { tools?: string[]; mcp_servers?: ServerStatus[] }[] } } } }>(
        daemon.url,
        `/session/${sessionId}/context`,
      );
      const init = context.body.state._meta.mend.messages[0]!;
      expect(init.tools).toEqual(expect.arrayContaining(['mcp__fx__echo', 'mcp__cfg__echo']));
      expect(init.mcp_servers).toEqual(servers);

      // A turn: the model calls the tool, the daemon asks, a client allows, the server runs it once.
      const client = new DaemonClient({ baseUrl: daemon.url });
      const asked: Event[] = [];
      const reading = (async () => {
        const seen: Event[] = [];
        for await (const e of client.subscribeEvents(sessionId, { lastEventId: 0 }) as AsyncIterable<Event>) {
          seen.push(e);
          if (e.type === 'permission_request') {
            asked.push(e);
            const answer = await call(daemon.url, `/session/${sessionId}/permission/${String(e.data['requestId'])}`, {
              body: { outcome: { outcome: 'selected', optionId: 'proceed_once' } },
            });
            expect(answer.status).toBe(200);
          }
          if (e.type === 'turn_complete' || e.type === 'turn_error') break;
        }
        return seen;
      })();
      const prompt = await call(daemon.url, `/session/${sessionId}/prompt`, { body: { prompt: [{ type: 'text', text: 'echo hi' }] } });
      expect(prompt.status).toBe(202);
      const events = await reading;
      expect(events.at(-1)).toMatchObject({ type: 'turn_complete', data: { stopReason: 'end_turn' } });
      expect(asked).toHaveLength(1);
      expect(asked[0]!.data['toolCall']).toMatchObject({ _meta: { toolName: 'mcp__fx__echo' } });

      const first = model.requests[0]!.body as ChatRequestBody;
      expect((first.tools ?? []).map((t) => t.function.name)).toEqual(expect.arrayContaining(['mcp__fx__echo', 'mcp__cfg__echo']));
      const results = (model.requests[1]!.body as ChatRequestBody).messages.filter((m) => m.role === 'tool');
      expect(results).toEqual([expect.objectContaining({ tool_call_id: 'call_1', content: 'echo: hi' })]);
      expect(readCallLog(calls).filter((c) => c.tool === 'echo')).toEqual([expect.objectContaining({ server: 'fx', args: { text: 'hi' } })]);

      // DELETE: the session's servers (fx, and cfg from the settings file) end with it, the daemon lives on.
      const pids = serverChildren(daemon.pid);
      expect(pids.length).toBe(2);
      expect((await call(daemon.url, `/session/${sessionId}`, { method: 'DELETE' })).status).toBe(204);
      await waitFor(() => pids.every((pid) => !alive(pid)), 10_000, 'the servers to stop with the session');
      expect(alive(daemon.pid)).toBe(true);

      // Resume takes servers too; the daemon's exit stops the servers of the sessions still open.
      const resumed = await call<{ mcpServers: ServerStatus[] }>(daemon.url, `/session/${sessionId}/resume`, {
        body: { cwd: sb.cwd, mcpServers: { fx: stdioConfig('fx', calls) } },
      });
      expect(resumed.status).toBe(200);
      expect(resumed.body.mcpServers.map((s) => s.name).sort()).toEqual(['cfg', 'fx']);
      await settledServers(daemon.url, sessionId);
      const left = serverChildren(daemon.pid);
      expect(left.length).toBe(2);
      expect((await daemon.stop('SIGTERM')).exitCode).toBe(0);
      await waitFor(() => left.every((pid) => !alive(pid)), 10_000, 'the servers to stop with the daemon');
    } finally {
      await model.close();
    }
  }, 120_000);

  it("mend's daemon-backed SDK: query({options: {mcpServers}}) starts them in the daemon; canUseTool answers the MCP tool's approval", async () => {
    const sb = makeSandbox('mcp-daemon-sdk');
    const calls = join(sb.scratch, 'calls.log');
    const script = writeScript(sb, [{ toolCalls: [{ id: 'l1', name: 'mcp__fx__lookup', args: { key: 'k' } }] }, { text: 'looked up' }]);
    const daemon = await startDaemon(sb, { args: ['--scripted-responses', script] });
    const asked: string[] = [];
    const q = connect({ url: daemon.url }).query({
      prompt: 'look k up',
      options: {
        mcpServers: { fx: stdioConfig('fx', calls) },
        canUseTool: async (name) => {
          asked.push(name);
          return { behavior: 'allow' };
        },
      },
    });
    const seen: SDKMessage[] = [];
    for await (const m of q) seen.push(m);
    const init = seen.find((m) => m.type === 'system' && m.subtype === 'init') as unknown as { mcp_servers: ServerStatus[]; tools: string[] };
    expect(init.mcp_servers.map((s) => s.name)).toEqual(['fx']);
    expect(init.mcp_servers[0]!.status).not.toBe('failed');
    expect(asked).toEqual(['mcp__fx__lookup']);
    expect(seen.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'looked up' });
    expect(readCallLog(calls).map((c) => `${c.server}/${c.tool}`)).toEqual(['fx/lookup']);
    expect((await daemon.stop()).exitCode).toBe(0);
  }, 60_000);

  it('a bad mcpServers entry is refused with 400 invalid_mcp_config naming the server, and nothing opens', async () => {
    const sb = makeSandbox('mcp-daemon-bad');
    const daemon = await startDaemon(sb, { args: ['--scripted-responses', join(sb.scratch, 'none.json')] });
    const cases: [unknown, string][] = [
      [{ nocmd: { args: ['x'] } }, 'nocmd'],
      [{ web: { type: 'http', url: 'ftp://example.com' } }, 'web'],
      [{ odd: { type: 'websocket', url: 'ws://x' } }, 'odd'],
      [{ host: { type: 'sdk', name: 'host' } }, 'host'],
      [{ typed: { command: 5 } }, 'typed'],
      [{ a__b: { command: 'node' } }, 'a__b'],
    ];
    for (const [mcpServers, server] of cases) {
      const sessionId = randomUUID();
      const answer = await call<{ code: string; server: string; error: string }>(daemon.url, '/session', { body: { sessionId, mcpServers } });
      expect(answer.status, JSON.stringify(mcpServers)).toBe(400);
      expect(answer.body).toMatchObject({ code: 'invalid_mcp_config', server });
      expect(answer.body.error).toContain(server);
      expect((await call(daemon.url, `/session/${sessionId}/context`)).status).toBe(404);
    }
    const list = await call<{ code: string }>(daemon.url, '/session', { body: { mcpServers: [{ name: 'x', command: 'node' }] } });
    expect(list).toMatchObject({ status: 400, body: { code: 'invalid_mcp_config' } });
    expect((await daemon.stop()).exitCode).toBe(0);
  }, 60_000);
});
