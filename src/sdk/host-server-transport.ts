/**
 * The host's end of the pipe between the CLI and an in-process MCP server (createSdkMcpServer):
 * requests from the CLI go in with `handle` and resolve with the server's reply; what the
 * server sends on its own goes to `notify` (the Query forwards it as an `mcp_message` request).
 * Type imports only: a Query without MCP servers loads nothing of the MCP SDK.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SdkMcpServerConfig } from './sdk-mcp-server.js';

export function isSdkMcpServer(value: unknown): value is SdkMcpServerConfig {
  const entry = value as { type?: unknown; instance?: { connect?: unknown } } | null;
  return typeof entry === 'object' && entry !== null && entry.type === 'sdk' && typeof entry.instance?.connect === 'function';
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
