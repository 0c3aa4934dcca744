/**
 * The MCP servers of one session, as a tool source beside the built-in tools: servers are
 * added (from the command line, the settings, a host's initialize, an editor's session/new),
 * connect in the background, and offer their tools as `mcp__<server>__<tool>`. The set of
 * tools is read per model request, so a `tools/list_changed` takes effect at the next one.
 */
import { z } from 'zod';
import { mcpToolName, normalizeMcpName, parseMcpToolName } from '../../wire/mcp-names.js';
import { redactSecretValues } from '../tool-env.js';
import type { Tool } from '../tool.js';
import type { McpMessageChannel } from './control-channel-transport.js';
import type { McpServerSpec } from './mcp-config.js';
import type { McpConnection, McpServerStatus } from './mcp-connection.js';

export type { McpServerStatus } from './mcp-connection.js';

export interface McpHubOptions {
  clientVersion: string;
  log: (line: string) => void;
  cwd: string;
  connectTimeoutMs?: number;
  baseEnv?: Record<string, string>;
}

export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;

const AnyArgs = z.record(z.string(), z.unknown());

export class McpHub {
  private readonly connections = new Map<string, McpConnection>();
  private toolCache: Tool[] | null = null;
  private closed = false;

  constructor(private readonly options: McpHubOptions) {}

  /** Servers added whose client module is still loading: listed as pending. */
  private readonly loading = new Set<string>();
  private readonly loads: Promise<void>[] = [];

  /** Starts connecting to each server not already known by name; an `sdk` server needs the host's channel. */
  add(specs: readonly McpServerSpec[], channel?: McpMessageChannel): void {
    if (this.closed) return;
    const fresh = specs.filter((spec) => {
      const known = this.connections.has(spec.name) || this.loading.has(spec.name);
      if (known) this.options.log(`mcp ${spec.name}: already configured; the later entry is ignored`);
      else this.loading.add(spec.name);
      return !known;
    });
    if (fresh.length === 0) return;
    // The MCP SDK is loaded by the first session that has a server: a run without one never pays for it.
    const load = import('./mcp-connection.js').then(
      ({ McpConnection }) => this.start(McpConnection, fresh, channel),
      (error: unknown) => {
        for (const spec of fresh) {
          this.loading.delete(spec.name);
          this.failedOnly.set(spec.name, `the MCP client could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
        }
      },
    );
    this.loads.push(load);
  }

  private start(Connection: typeof McpConnection, specs: readonly McpServerSpec[], channel: McpMessageChannel | undefined): void {
    for (const spec of specs) {
      this.loading.delete(spec.name);
      if (this.closed) continue;
      const connection = new Connection(spec, {
        clientVersion: this.options.clientVersion,
        log: this.options.log,
        connectTimeoutMs: this.options.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS,
        channel,
        baseEnv: this.options.baseEnv,
        cwd: this.options.cwd,
        onToolsChanged: () => (this.toolCache = null),
      });
      this.connections.set(spec.name, connection);
      void connection.ready.then(() => (this.toolCache = null));
    }
    this.toolCache = null;
  }

  /** A server known by name that could not even be configured: listed as failed. */
  addFailed(name: string, error: string): void {
    if (this.connections.has(name) || this.closed) return;
    this.failedOnly.set(name, error);
  }

  private readonly failedOnly = new Map<string, string>();

  get size(): number {
    return this.connections.size + this.loading.size + this.failedOnly.size;
  }

  /** Resolves once every server added so far is connected or failed (each connect is bounded by its timeout). */
  async settled(): Promise<void> {
    await Promise.all(this.loads);
    await Promise.all([...this.connections.values()].map((c) => c.ready));
  }

  statuses(): McpServerStatus[] {
    return [
      ...[...this.connections.values()].map((c) => c.status),
      ...[...this.loading].map((name) => ({ name, status: 'pending' as const })),
      ...[...this.failedOnly].map(([name, error]) => ({ name, status: 'failed' as const, error })),
    ];
  }

  /** A message the host sent for one of its SDK servers (`mcp_message` from host to mend). */
  deliver(server: string, message: unknown): boolean {
    const transport = this.connections.get(server)?.sdkTransport;
    if (!transport) return false;
    transport.deliver(message);
    return true;
  }

  /** Resolves once every pending tool-list refresh is read (bounded: a server that does not answer is left as it was). */
  async ready(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.refreshed()));
  }

  /** For an `mcp__server__tool` name of a known server that is not connected: why it cannot run. */
  unavailable(name: string): string | undefined {
    const parsed = parseMcpToolName(name);
    if (!parsed) return undefined;
    for (const connection of this.connections.values()) {
      if (normalizeMcpName(connection.spec.name) !== parsed.server) continue;
      const status = connection.status;
      if (status.status === 'connected') return undefined;
      return `MCP server ${connection.spec.name} is not connected${status.error ? `: ${status.error}` : ''}; its tool ${parsed.tool} cannot run.`;
    }
    return undefined;
  }

  /** The tools of the connected servers, as tools like the built-in ones. */
  tools(): Tool[] {
    if (this.toolCache) return this.toolCache;
    const tools: Tool[] = [];
    const seen = new Set<string>();
    for (const connection of this.connections.values()) {
      for (const info of connection.tools) {
        const name = mcpToolName(connection.spec.name, info.name);
        if (seen.has(name)) continue;
        seen.add(name);
        tools.push(mcpTool(connection, name, info));
      }
    }
    this.toolCache = tools;
    return tools;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.loads);
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }
}

function mcpTool(connection: McpConnection, name: string, info: McpConnection['tools'][number]): Tool {
  const readOnly = info.annotations?.readOnlyHint === true;
  const { $schema: _ignored, ...parameters } = info.inputSchema as Record<string, unknown>;
  const server = connection.spec.name;
  return {
    name,
    description: info.description ?? info.title ?? `${info.name} (MCP server ${server})`,
    parameters,
    kind: readOnly ? 'read' : 'execute',
    argsSchema: AnyArgs,
    mcp: { server, tool: info.name, readOnly },
    async execute(args, ctx) {
      const parsed = AnyArgs.safeParse(args ?? {});
      if (!parsed.success) return { output: `Invalid arguments for ${name}: expected an object`, isError: true, errorType: 'invalid_tool_params' };
      const outcome = await connection.call(info.name, parsed.data, ctx.signal, ctx.outputCap);
      const secrets = ctx.secrets ?? [];
      return secrets.length === 0 ? outcome : { ...outcome, output: redactSecretValues(outcome.output, secrets) };
    },
  };
}
