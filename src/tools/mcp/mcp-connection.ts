/**
 * One MCP server of a session: its transport, the SDK client over it, its status
 * (`pending`, `connected`, `failed` with the reason) and its tools. A call ends within the
 * server's tool timeout whatever the server does (hangs, dies, answers garbage); an abort
 * cancels the request (the SDK sends `notifications/cancelled`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import type { ToolOutcome } from '../tool.js';
import { ControlChannelTransport, type McpMessageChannel } from './control-channel-transport.js';
import { DEFAULT_MCP_TOOL_TIMEOUT_MS, type McpServerSpec } from './mcp-config.js';
import { mcpOutcome } from './mcp-result.js';
import { guardedCommand, killGroup, rememberGroup } from './process-groups.js';

export type McpServerStatus = { name: string; status: 'pending' | 'connected' | 'failed'; error?: string };

export interface ConnectionOptions {
  clientVersion: string;
  /** Where a server's stderr and connection events go (the debug log). */
  log: (line: string) => void;
  /** How long connecting (spawn, initialize, tools/list) may take. */
  connectTimeoutMs: number;
  /** For `sdk` servers: the host's control channel. */
  channel?: McpMessageChannel | undefined;
  /** Environment of stdio servers before their own `env` (mend's tool environment: credentials removed). */
  baseEnv?: Record<string, string> | undefined;
  cwd: string;
  /** Called when the server's tool list changed (a `tools/list_changed` notification was followed up). */
  onToolsChanged: () => void;
}

const STDERR_TAIL = 2048;

export class McpConnection {
  private state: McpServerStatus['status'] = 'pending';
  private failure: string | undefined;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private pid: number | null = null;
  private stderrTail = '';
  private toolList: McpToolInfo[] = [];
  private closing = false;
  readonly ready: Promise<void>;

  constructor(
    readonly spec: McpServerSpec,
    private readonly options: ConnectionOptions,
  ) {
    this.ready = this.connect();
  }

  get status(): McpServerStatus {
    return { name: this.spec.name, status: this.state, ...(this.failure !== undefined ? { error: this.failure } : {}) };
  }

  /** The server's tools after its include/exclude filters; none unless connected. */
  get tools(): readonly McpToolInfo[] {
    if (this.state !== 'connected') return [];
    const { includeTools, excludeTools } = this.spec;
    return this.toolList.filter((t) => (includeTools === undefined || includeTools.includes(t.name)) && !(excludeTools ?? []).includes(t.name));
  }

  get sdkTransport(): ControlChannelTransport | undefined {
    return this.transport instanceof ControlChannelTransport ? this.transport : undefined;
  }

  private makeTransport(): Transport {
    const t = this.spec.transport;
    switch (t.kind) {
      case 'stdio': {
        const launch = guardedCommand(t.command, t.args);
        const transport = new StdioClientTransport({
          command: launch.command,
          args: launch.args,
          env: { ...(this.options.baseEnv ?? {}), ...t.env },
          cwd: t.cwd ?? this.options.cwd,
          stderr: 'pipe',
        });
        transport.stderr?.on('data', (chunk: Buffer) => {
          const text = chunk.toString('utf8');
          this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL);
          for (const line of text.split('\n')) if (line.trim() !== '') this.options.log(`mcp ${this.spec.name} stderr: ${line}`);
        });
        return transport;
      }
      case 'http':
        return new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers: t.headers } });
      case 'sse':
        return new SSEClientTransport(new URL(t.url), { requestInit: { headers: t.headers }, eventSourceInit: { fetch: withHeaders(t.headers) } });
      case 'sdk':
        if (!this.options.channel) throw new Error('an sdk server needs a host that carries mcp_message requests (stream-json with initialize)');
        return new ControlChannelTransport(this.spec.name, this.options.channel);
    }
  }

  private async connect(): Promise<void> {
    try {
      const transport = this.makeTransport();
      this.transport = transport;
      const client = new Client({ name: 'mend', version: this.options.clientVersion }, { capabilities: {} });
      // Handled here rather than with the SDK's debounced listChanged option: the refresh starts when
      // the notification arrives, so the next model request can wait for it (see refreshed()).
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        this.refreshing = this.refreshTools(client);
      });
      this.client = client;
      const connecting = client.connect(transport, { timeout: this.options.connectTimeoutMs });
      if (transport instanceof StdioClientTransport) {
        // The pid exists once spawned; remembered at once so every exit path can kill the group.
        void connecting.catch(() => undefined);
        await Promise.resolve();
        this.pid = transport.pid;
        if (this.pid !== null) rememberGroup(this.pid);
      }
      await connecting;
      if (transport instanceof StdioClientTransport && this.pid === null) {
        this.pid = transport.pid;
        if (this.pid !== null) rememberGroup(this.pid);
      }
      const tools = await this.listTools(client);
      if (this.closing) return;
      this.toolList = tools;
      this.state = 'connected';
      this.options.log(`mcp ${this.spec.name}: connected (${this.spec.transport.kind}), ${tools.length} tool(s)`);
      client.onclose = () => {
        if (this.closing || this.state === 'failed') return;
        this.state = 'failed';
        this.failure = `the connection closed${this.stderrHint()}`;
        this.options.log(`mcp ${this.spec.name}: ${this.failure}`);
        this.options.onToolsChanged();
        this.killProcess();
      };
    } catch (error) {
      this.state = 'failed';
      this.failure = `${error instanceof Error ? error.message : String(error)}${this.stderrHint()}`;
      this.options.log(`mcp ${this.spec.name}: failed to start: ${this.failure}`);
      await this.close();
      this.closing = false;
    }
  }

  private refreshing: Promise<void> | undefined;

  /** Resolves once a tool-list refresh in flight (if any) is done. */
  refreshed(): Promise<void> {
    return this.refreshing ?? Promise.resolve();
  }

  private async listTools(client: Client): Promise<McpToolInfo[]> {
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.options.connectTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  private async refreshTools(client: Client): Promise<void> {
    try {
      this.toolList = await this.listTools(client);
      this.options.log(`mcp ${this.spec.name}: tools changed (${this.toolList.length})`);
    } catch (error) {
      this.options.log(`mcp ${this.spec.name}: refreshing tools failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.options.onToolsChanged();
  }

  private stderrHint(): string {
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    return tail ? ` (stderr: ${tail.slice(-300)})` : '';
  }

  /** One tools/call; the outcome is always a value (an error result when the server fails or times out). */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, outputCap: number): Promise<ToolOutcome> {
    const origin = { server: this.spec.name, tool };
    const client = this.client;
    if (this.state !== 'connected' || !client) {
      return {
        output: `MCP server ${this.spec.name} is not connected${this.failure ? `: ${this.failure}` : ''}`,
        isError: true,
        errorType: 'mcp_server_unavailable',
      };
    }
    const timeoutMs = this.spec.timeoutMs ?? DEFAULT_MCP_TOOL_TIMEOUT_MS;
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: timeoutMs, maxTotalTimeout: timeoutMs });
      return mcpOutcome(result, outputCap, origin);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (signal.aborted) return { output: `MCP call to ${this.spec.name}/${tool} was cancelled`, isError: true, errorType: 'aborted' };
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        return {
          output: `MCP server ${this.spec.name} did not answer ${tool} within ${timeoutMs} ms; the call was cancelled. Its outcome is unknown: check before retrying.`,
          isError: true,
          errorType: 'mcp_timeout',
        };
      }
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        return {
          output: `MCP server ${this.spec.name} stopped while running ${tool}${this.stderrHint()}. Its outcome is unknown: check before retrying.`,
          isError: true,
          errorType: 'mcp_server_unavailable',
        };
      }
      return { output: `MCP server ${this.spec.name} failed ${tool}: ${message}`, isError: true, errorType: 'mcp_tool_error' };
    }
  }

  private killProcess(): void {
    if (this.pid !== null) killGroup(this.pid, 'SIGKILL');
  }

  /** Stops the server (its whole process group for stdio). */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const client = this.client;
    if (client) {
      // The SDK ends stdin and waits for the server to exit; it need not wait long: the group is killed next.
      await Promise.race([client.close().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } else {
      await this.transport?.close().catch(() => undefined);
    }
    this.killProcess();
  }
}

/** EventSource's GET carries no requestInit headers: a fetch that adds them. */
function withHeaders(headers: Record<string, string>): typeof fetch {
  return (url, init) => fetch(url, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...headers } });
}
