/**
 * An MCP transport to a server that lives inside the host (Claude's and Qwen's
 * `createSdkMcpServer`): each JSON-RPC message mend sends travels as an `mcp_message`
 * control request, and the host's answer carries the server's reply (`mcp_response`).
 * Messages the server sends on its own (a `tools/list_changed` notification) arrive as
 * `mcp_message` requests from the host and are handed in with `deliver`.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The host side, implemented by the front end that speaks the control protocol. */
export interface McpMessageChannel {
  /** Sends one message to the named server; resolves with the host's `mcp_response` (undefined when there is none). */
  send(server: string, message: JSONRPCMessage): Promise<unknown>;
}

export class ControlChannelTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private closed = false;

  constructor(
    private readonly server: string,
    private readonly channel: McpMessageChannel,
  ) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error(`SDK MCP server ${this.server}: transport closed`);
    const isRequest = 'method' in message && 'id' in message;
    // Not awaited: the client waits for the answer by id, and a slow tool must not block other sends.
    void this.channel.send(this.server, message).then(
      (answer) => {
        if (!isRequest || this.closed) return;
        const parsed = JSONRPCMessageSchema.safeParse(answer);
        if (parsed.success) this.onmessage?.(parsed.data);
        else this.fail(message, `the host answered with no JSON-RPC message`);
      },
      (error: unknown) => {
        if (!isRequest || this.closed) return;
        this.fail(message, error instanceof Error ? error.message : String(error));
      },
    );
  }

  /** A message the host sent for this server (a notification or a request of the server). */
  deliver(message: unknown): void {
    const parsed = JSONRPCMessageSchema.safeParse(message);
    if (parsed.success && !this.closed) this.onmessage?.(parsed.data);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  /** A request the host could not carry is answered with a JSON-RPC error, so the caller does not wait for its timeout. */
  private fail(request: JSONRPCMessage, why: string): void {
    if (!('id' in request)) return;
    this.onmessage?.({ jsonrpc: '2.0', id: request.id, error: { code: -32603, message: `SDK MCP server ${this.server}: ${why}` } } as JSONRPCMessage);
  }
}
