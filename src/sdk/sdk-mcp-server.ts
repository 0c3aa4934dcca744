/**
 * In-process MCP servers for hosts on mend's SDK, with the helpers Claude's and Qwen's SDKs
 * have (`createSdkMcpServer` + `tool()`): the server runs in the host, the CLI reaches it
 * through `mcp_message` control requests (the CLI's MCP client messages in, the server's
 * replies back in the answer), and what the server says on its own (a tool list that
 * changed) goes to the CLI as an `mcp_message` request of the host.
 */
import { McpServer, type ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
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
