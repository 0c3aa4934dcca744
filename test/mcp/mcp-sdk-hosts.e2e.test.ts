/**
 * In-process MCP servers of SDK hosts, end to end against the built mend: the real
 * `@anthropic-ai/claude-agent-sdk` query(), the real `@qwen-code/sdk` query() and mend's own
 * SDK, each with its own `createSdkMcpServer` + `tool()`. Each host: the model calls the host's
 * tool, the approval goes to the host's canUseTool, the result reaches the model (the next
 * request of the loopback OpenAI server); then mend is killed with SIGKILL while a slow tool of
 * the host runs, the session is resumed and continued: the call is answered once as outcome
 * unknown naming the server, and the host's tool is never called again.
 */
import { query as claudeQuery, createSdkMcpServer as claudeServer, tool as claudeTool } from '@anthropic-ai/claude-agent-sdk';
import { query as qwenQuery, createSdkMcpServer as qwenServer, tool as qwenTool } from '@qwen-code/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSdkMcpServer as mendServer, query as mendQuery, tool as mendTool } from '../../src/sdk/index.js';
import { API_KEY, BIN, baseEnv, cleanupSandboxes, makeSandbox, waitFor, type Sandbox } from '../support/cli.js';
import { mendChildren } from '../support/mcp.js';
import { startOpenAIServer, textReply, toolCallReply, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { claudeOptions, promptStream } from '../frontends/claude-sdk/helpers.js';

afterAll(cleanupSandboxes);

interface HostTools {
  lookups: string[];
  slowCalls: number;
  release: () => void;
}

/** The host's two tools, whatever the SDK: `lookup` (answers at once) and `slow` (waits until released). */
function hostTools(): HostTools & {
  lookup: (a: { key: string }) => Promise<{ content: { type: 'text'; text: string }[] }>;
  slow: () => Promise<{ content: { type: 'text'; text: string }[] }>;
} {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const state = {
    lookups: [] as string[],
    slowCalls: 0,
    release: () => release(),
    lookup: async ({ key }: { key: string }) => {
      state.lookups.push(key);
      return { content: [{ type: 'text' as const, text: `${key} is 42` }] };
    },
    slow: async () => {
      state.slowCalls += 1;
      await gate;
      return { content: [{ type: 'text' as const, text: 'slow done' }] };
    },
  };
  return state;
}

interface Host {
  name: string;
  /** Runs prompts (or a resume that continues) until `results` results arrived; returns every message. */
  run(
    sb: Sandbox,
    model: OpenAIServer,
    tools: ReturnType<typeof hostTools>,
    opts: { prompts: string[]; resume?: string; asked: string[] },
  ): Promise<Record<string, unknown>[]>;
}

const modelEnv = (model: OpenAIServer) => ({ OPENAI_API_KEY: API_KEY, OPENAI_BASE_URL: model.baseURL, OPENAI_MODEL: 'test-model' });

async function drain(iterable: AsyncIterable<unknown>, out: Record<string, unknown>[], until: () => boolean, onResult: () => void): Promise<void> {
  try {
    for await (const m of iterable) {
      out.push(m as Record<string, unknown>);
      if ((m as { type?: string }).type === 'result') onResult();
      if (until()) break;
    }
  } catch {
    // A killed mend ends the query with an error: what came before is what the test reads.
  }
}

export const hosts: Host[] = [
  {
    name: "Claude's Agent SDK",
    async run(sb, model, tools, { prompts, resume, asked }) {
      const server = claudeServer({
        name: 'host',
        tools: [claudeTool('lookup', 'Looks a key up', { key: z.string() }, tools.lookup), claudeTool('slow', 'Takes a while', {}, tools.slow)],
      });
      const stream = promptStream();
      for (const p of prompts) stream.push(p);
      const out: Record<string, unknown>[] = [];
      let results = 0;
      const q = claudeQuery({
        prompt: stream.messages,
        options: claudeOptions(sb, undefined, {
          envExtra: modelEnv(model),
          mcpServers: { host: server },
          canUseTool: async (name, input) => {
            asked.push(name);
            return { behavior: 'allow', updatedInput: input };
          },
          ...(resume ? { resume, extraArgs: { 'continue-interrupted': null } } : {}),
        }),
      });
      const expected = prompts.length + (resume ? 1 : 0);
      await drain(
        q,
        out,
        () => results >= expected,
        () => {
          results += 1;
          if (results >= expected) stream.end();
        },
      );
      stream.end();
      q.close();
      return out;
    },
  },
  {
    name: "Qwen Code's SDK",
    async run(sb, model, tools, { prompts, resume, asked }) {
      const server = qwenServer({
        name: 'host',
        // Qwen's declarations name zod 3 types; at run time its MCP server takes zod 4 shapes as well.
        tools: [
          qwenTool('lookup', 'Looks a key up', { key: z.string() } as never, tools.lookup as never) as never,
          qwenTool('slow', 'Takes a while', {}, tools.slow),
        ],
      });
      const stream = promptStream();
      for (const p of prompts) stream.push(p);
      const out: Record<string, unknown>[] = [];
      let results = 0;
      const q = qwenQuery({
        prompt: stream.messages as never,
        options: {
          cwd: sb.cwd,
          pathToQwenExecutable: BIN,
          env: baseEnv(sb, modelEnv(model)),
          mcpServers: { host: server },
          canUseTool: async (name: string, input: Record<string, unknown>) => {
            asked.push(name);
            return { behavior: 'allow', updatedInput: input };
          },
          ...(resume ? { resume, extraArgs: ['--continue-interrupted'] } : {}),
        },
      });
      const expected = prompts.length + (resume ? 1 : 0);
      await drain(
        q,
        out,
        () => results >= expected,
        () => {
          results += 1;
          if (results >= expected) stream.end();
        },
      );
      stream.end();
      await q.close().catch(() => undefined);
      return out;
    },
  },
  {
    name: "mend's SDK",
    async run(sb, model, tools, { prompts, resume, asked }) {
      const server = mendServer({
        name: 'host',
        tools: [mendTool('lookup', 'Looks a key up', { key: z.string() }, tools.lookup), mendTool('slow', 'Takes a while', {}, tools.slow)],
      });
      const stream = promptStream();
      for (const p of prompts) stream.push(p);
      const out: Record<string, unknown>[] = [];
      let results = 0;
      const q = mendQuery({
        prompt: stream.messages,
        options: {
          cwd: sb.cwd,
          pathToExecutable: BIN,
          env: baseEnv(sb, modelEnv(model)),
          mcpServers: { host: server },
          canUseTool: async (name, input) => {
            asked.push(name);
            return { behavior: 'allow', updatedInput: input };
          },
          ...(resume ? { resume, extraArgs: ['--continue-interrupted'] } : {}),
        },
      });
      const expected = prompts.length + (resume ? 1 : 0);
      await drain(
        q,
        out,
        () => results >= expected,
        () => {
          results += 1;
          if (results >= expected) stream.end();
        },
      );
      stream.end();
      await q.close().catch(() => undefined);
      return out;
    },
  },
];

const toolMessages = (body: ChatRequestBody) => body.messages.filter((m) => m.role === 'tool');

describe.each(hosts)('in-process MCP server of $name', (host) => {
  it('its tool is asked about, runs in the host, its result reaches the model; after kill -9 mid-call the resume answers it once as outcome unknown', async () => {
    const sb = makeSandbox('mcp-sdk-host');
    const model = await startOpenAIServer();
    const tools = hostTools();
    try {
      model.enqueue(toolCallReply([{ id: 'call_l', name: 'mcp__host__lookup', args: { key: 'a' } }]), textReply('a is 42'));
      const asked: string[] = [];
      const first = await host.run(sb, model, tools, { prompts: ['look a up'], asked });
      expect(asked).toEqual(['mcp__host__lookup']);
      expect(tools.lookups).toEqual(['a']);
      expect(toolMessages(model.requests[1]!.body as ChatRequestBody)).toEqual([expect.objectContaining({ tool_call_id: 'call_l', content: 'a is 42' })]);
      const inits = first.filter((m) => m['type'] === 'system' && m['subtype'] === 'init');
      expect(inits.at(-1)!['mcp_servers']).toEqual([{ name: 'host', status: 'connected' }]);
      expect(first.find((m) => m['type'] === 'result')).toMatchObject({ is_error: false });
      const sessionId = String(inits[0]!['session_id']);

      // A second session for the crash: a slow call of the host's, mend killed while it runs.
      model.enqueue(toolCallReply([{ id: 'call_s', name: 'mcp__host__slow', args: {} }]));
      const crashed = host.run(sb, model, tools, { prompts: ['go slow'], resume: undefined, asked });
      await waitFor(() => tools.slowCalls === 1, 60_000, 'the slow call in the host');
      const killed = mendChildren();
      expect(killed.length).toBeGreaterThan(0);
      for (const pid of killed) process.kill(pid, 'SIGKILL');
      // The host's call completes after mend died (it took effect; nobody recorded it). Qwen's SDK
      // reads nothing while a tool handler runs, so it learns of the exit only then.
      tools.release();
      const crashedOut = await crashed;
      const crashedSession = String(crashedOut.find((m) => m['type'] === 'system' && m['subtype'] === 'init')!['session_id']);
      expect(crashedSession).not.toBe(sessionId);

      model.enqueue(textReply('verified first'));
      const requestsBefore = model.requests.length;
      const resumed = await host.run(sb, model, tools, { prompts: [], resume: crashedSession, asked });
      const sent = toolMessages(model.requests[requestsBefore]!.body as ChatRequestBody);
      expect(sent).toEqual([expect.objectContaining({ tool_call_id: 'call_s' })]);
      expect(sent[0]!.content).toMatch(/outcome is unknown/i);
      expect(sent[0]!.content).toContain('MCP server "host"');
      expect(resumed.find((m) => m['type'] === 'result')).toMatchObject({ is_error: false, result: 'verified first' });
      // Never sent again: the host's tool ran once.
      expect(tools.slowCalls).toBe(1);
      expect(model.unexpected).toBe(0);
    } finally {
      tools.release();
      await model.close();
    }
  }, 180_000);
});
