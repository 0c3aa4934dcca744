/**
 * The host's in-process MCP servers over the control protocol: each message mend's MCP
 * client sends to such a server goes out as an `mcp_message` control request, and the
 * host's `control_response` carries the server's reply as `mcp_response` (the shape
 * Claude's and Qwen's SDKs use). End of stdin answers whatever is still pending.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { McpMessageChannel } from '../../tools/mcp/control-channel-transport.js';
import type { CliOutboundControl } from '../../wire/control.js';

type Answer = { subtype?: string; response?: unknown; error?: string };

export class HostMcpChannel implements McpMessageChannel {
  private readonly pending = new Map<string, (answer: Answer) => void>();
  private seq = 0;
  private closed = false;

  constructor(private readonly emit: (message: CliOutboundControl) => void) {}

  settle(requestId: string, answer: Answer): boolean {
    const resolve = this.pending.get(requestId);
    if (!resolve) return false;
    this.pending.delete(requestId);
    resolve(answer);
    return true;
  }

  close(): void {
    this.closed = true;
    for (const id of [...this.pending.keys()]) this.settle(id, { subtype: 'error', error: 'stdin closed before the host answered' });
  }

  async send(server: string, message: JSONRPCMessage): Promise<unknown> {
    if (this.closed) throw new Error('stdin is closed: the host cannot be reached');
    const requestId = `mend_mcp_${++this.seq}`;
    const answer = await new Promise<Answer>((resolve) => {
      this.pending.set(requestId, resolve);
      this.emit({
        type: 'control_request',
        request_id: requestId,
        request: { subtype: 'mcp_message', server_name: server, message: message as { jsonrpc: '2.0' } },
      });
    });
    if (answer.subtype !== 'success') throw new Error(answer.error ?? 'the host answered with an error');
    const response = answer.response as { mcp_response?: unknown } | undefined;
    return response?.mcp_response;
  }
}
