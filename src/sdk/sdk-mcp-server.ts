/**
 * In-process MCP servers for hosts on mend's SDK, with the helpers Claude's and Qwen's SDKs
 * have (`createSdkMcpServer` + `tool()`): the server runs in the host, the CLI reaches it
 * through `mcp_message` control requests (the CLI's MCP client messages in, the server's
 * replies back in the answer), and what the server says on its own (a tool list that
 * changed) goes to the CLI as an `mcp_message` request of the host.
 */
import { McpServer, type ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, JSONRPCMessage, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ZodRawShape } from 'zod';

export interface SdkMcpToolDefinition<S extends ZodRawShape = ZodRawShape> {
  name: string;
  description: string;
  inputSchema: S;
  handler: ToolCallback<S>;
  annotations?: ToolAnnotations | undefined;
}

/** A tool for createSdkMcpServer: its name on the server (the model sees `mcp__<server>__<name>`), its zod input shape, its handler. */
export function tool<S extends ZodRawShape>(
  name: string,
  description: string,
  inputSchema: S,
  handler: (args: Parameters<ToolCallback<S>>[0], extra: Parameters<ToolCallback<S>>[1]) => Promise<CallToolResult>,
  extras: { annotations?: ToolAnnotations } = {},
): SdkMcpToolDefinition<S> {
  return { name, description, inputSchema, handler: handler as ToolCallback<S>, annotations: extras.annotations };
}

/** What `mcpServers` takes for an in-process server. */
export interface SdkMcpServerConfig {
  type: 'sdk';
  name: string;
  instance: McpServer;
}

// oxlint-disable-next-line typescript/no-explicit-any -- a list of tools of different shapes, as in Claude's SDK
export function createSdkMcpServer(options: { name: string; version?: string; tools?: SdkMcpToolDefinition<any>[] }): SdkMcpServerConfig {
  const server = new McpServer({ name: options.name, version: options.version ?? '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  for (const t of options.tools ?? []) {
    server.registerTool(
      t.name,
      { description: t.description, inputSchema: t.inputSchema, ...(t.annotations ? { annotations: t.annotations } : {}) },
      t.handler,
    );
  }
  return { type: 'sdk', name: options.name, instance: server };
}

export function isSdkMcpServer(value: unknown): value is SdkMcpServerConfig {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'sdk' &&
    (value as { instance?: unknown }).instance instanceof McpServer
  );
}

/** The server's end of the pipe to the CLI: requests from the CLI go in with `handle`, replies come back from it. */
export class HostServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly waiting = new Map<string | number, (message: JSONRPCMessage) => void>();

  /** `notify`: a message the server sends on its own, for the CLI. */
  constructor(private readonly notify: (message: JSONRPCMessage) => void) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message)) {
      const resolve = this.waiting.get(message.id);
      if (resolve) {
        this.waiting.delete(message.id);
        return resolve(message);
      }
    }
    this.notify(message);
  }

  /** One message from the CLI; a request resolves with the server's reply, anything else with undefined. */
  handle(message: JSONRPCMessage): Promise<JSONRPCMessage | undefined> {
    if (!('method' in message) || !('id' in message) || message.id === undefined) {
      this.onmessage?.(message);
      return Promise.resolve(undefined);
    }
    const id = message.id;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.onmessage?.(message);
    });
  }

  async close(): Promise<void> {
    for (const [id, resolve] of this.waiting) resolve({ jsonrpc: '2.0', id, error: { code: -32000, message: 'the host closed the server' } });
    this.waiting.clear();
    this.onclose?.();
  }
}
