/**
 * `mend serve`: an HTTP daemon serving many sessions of one or more project
 * roots. The first stdout line is `{"type":"ready","url":...,"pid":...}`; logs
 * go to stderr (the token never does). SIGTERM/SIGINT: stop accepting,
 * interrupt running turns (recorded as aborted), close every stream with
 * `session_closed`, exit 0.
 */
import { realpathSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { MendError, errorCodeOf, errorMessageOf } from '../../errors.js';
import type { HostEnv } from '../../runtime/host-env.js';
import { settledBackgroundCheckpoints } from '../../runtime/session-runtime.js';
import type { McpServerSpec } from '../../tools/mcp/mcp-config.js';
import type { ApprovalMode } from '../../wire/approval-modes.js';
import type { ReadyLine } from '../../wire/daemon-api.js';
import { ExitCode, exitCodeFor } from '../../wire/exit-codes.js';
import { listenCopies, type ListenCopies } from './accept-copies/listen-copies.js';
import { createApp, type AppLimits } from './app.js';
import { hostPort, isLoopbackHost } from './guards.js';
import { SessionRegistry } from './session-registry.js';

export interface ServeOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  /** Project roots sessions may live under; empty: the directory mend serve started in. */
  roots: string[];
  /** Bearer token every request must carry; required to listen beyond loopback. */
  token: string | undefined;
  approvalMode: ApprovalMode;
  allowedTools: string[];
  maxTurns: number;
  model: string | undefined;
  systemPrompt?: string | undefined;
  appendSystemPrompt?: string | undefined;
  /** Only these tools are offered (--core-tools); undefined: all. */
  coreTools?: string[] | undefined;
  /** Never offered, never run (--exclude-tools). */
  excludeTools?: string[] | undefined;
  /** 0: wait for a permission answer as long as the turn runs. */
  permissionTimeoutMs: number;
  debug: boolean;
  /** --mcp-config, --strict-mcp-config, --allowed-mcp-server-names: read by the composition root, as for a run. */
  mcpConfigs?: string[] | undefined;
  strictMcpConfig?: boolean | undefined;
  allowedMcpServerNames?: string[] | undefined;
  /** Servers every session starts with (--mcp-config, the settings file), resolved by the composition root. */
  mcpServers?: McpServerSpec[] | undefined;
  /** Servers of that configuration that could not be read: listed failed in every session. */
  mcpFailed?: { name: string; error: string }[] | undefined;
  /** Copies of the listening socket polled beside it (accept-copies/listen-copies.ts); 0 or unset: none. */
  acceptCopies?: number | undefined;
  /** Event streams written to node's response directly (sse-sink.ts; default); false: through hono's streamSSE. */
  sseDirect?: boolean | undefined;
}

export const DEFAULT_LIMITS: AppLimits = {
  maxBodyBytes: 1024 * 1024,
  maxPendingPromptsPerSession: 5,
  maxQueuedEvents: 2048,
  journalEvents: 4096,
  heartbeatMs: 15_000,
  sseRetryMs: 3000,
  sessionRestoreTimeoutMs: 60_000,
};
const JOURNAL_BYTES = 8 * 1024 * 1024;
/** After shutdown began, how long open connections get before they are cut. */
const CLOSE_GRACE_MS = 2000;
const LISTEN_BACKLOG = 4096;
/**
 * How long a request may take to arrive whole. Node's defaults (60 s for the headers)
 * answered 408 to clients of a daemon whose loop was minutes behind under 1,000 sessions;
 * a busy daemon makes them wait instead (still bounded against a client that never sends).
 */
const REQUEST_TIMEOUT_MS = 300_000;
/**
 * How long an idle kept-alive connection stays open. A new connection costs more than a
 * request on a busy daemon: the loop accepts one connection per iteration (libuv 1.45+),
 * so under load a client's next connection can wait seconds in the accept queue while a
 * kept one is read at once. Node's 5 s closed the sockets of sessions waiting on a long
 * turn; clients (fetch, node's Agent) give a socket up a second before this hint.
 */
const KEEP_ALIVE_MS = 65_000;

function resolveRoots(roots: readonly string[], cwd: string): string[] {
  const wanted = roots.length > 0 ? roots : [cwd];
  return [
    ...new Set(
      wanted.map((root) => {
        try {
          const real = realpathSync(root);
          if (statSync(real).isDirectory()) return real;
        } catch {
          // reported below
        }
        throw new MendError('usage', `--root is not an existing directory: ${root}`);
      }),
    ),
  ];
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(new MendError('usage', `cannot listen on ${hostPort(host, port)}: ${error.code ?? error.message}`));
    server.once('error', onError);
    // Many clients connect at once (a host opening 1,000 sessions): the kernel keeps them
    // queued until the loop accepts them, instead of dropping their SYNs (node's default
    // backlog is 511).
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

export async function runServe(o: ServeOptions, host: HostEnv, limits: AppLimits = DEFAULT_LIMITS): Promise<number> {
  const log = (line: string) => void host.stderr.write(`mend serve: ${line}\n`);
  let server: Server | undefined;
  let copies: ListenCopies | undefined;
  try {
    if (!isLoopbackHost(o.host) && o.token === undefined) {
      throw new MendError('usage', `refusing to listen on ${o.host} without a token: pass --token or set MEND_SERVER_TOKEN (loopback needs none)`);
    }
    const roots = resolveRoots(o.roots, host.runtime.cwd);
    let closing = false;
    let port = o.port;
    const registry = new SessionRegistry({
      runtime: host.runtime,
      roots,
      // The host's options as given: every session's settings come from them (runtimeSettingsFrom).
      options: o,
      mcpFailed: o.mcpFailed,
      session: {
        now: host.runtime.now,
        journal: { maxEvents: limits.journalEvents, maxBytes: JOURNAL_BYTES, maxQueued: limits.maxQueuedEvents },
        maxPendingPrompts: limits.maxPendingPromptsPerSession,
        permissionTimeoutMs: o.permissionTimeoutMs,
        modelName: host.modelName,
        toolNames: host.toolNames,
        log,
      },
    });
    const app = createApp({
      registry,
      guard: { host: o.host, port: () => port, token: o.token, maxBodyBytes: limits.maxBodyBytes, closing: () => closing },
      limits,
      version: host.runtime.version,
      roots,
      log,
      sseDirect: o.sseDirect ?? true,
    });
    server = createAdaptorServer({ fetch: app.fetch, hostname: o.host }) as Server;
    server.headersTimeout = REQUEST_TIMEOUT_MS;
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    port = await listen(server, o.port, o.host);
    copies = await listenCopies(server, o.acceptCopies ?? 0, log);

    // A missing model setting is worth knowing now; loading and inspecting work without one.
    await host.runtime
      .provider(o.model)()
      .catch((error: unknown) => log(`warning: prompts will fail until the model is configured: ${errorMessageOf(error)}`));

    const ready: ReadyLine = { type: 'ready', url: `http://${hostPort(o.host, port)}`, pid: host.runtime.identity.pid };
    host.stdout.write(`${JSON.stringify(ready)}\n`);
    log(`listening on ${ready.url} for ${roots.join(', ')}${o.token !== undefined ? ' (bearer token required)' : ''}`);

    await new Promise<void>((resolve) => {
      if (host.signal.aborted) resolve();
      else host.signal.addEventListener('abort', () => resolve(), { once: true });
    });

    // Shutdown. The signal already aborted every running turn through the runtimes.
    log(`${String(host.signal.reason)}: shutting down (${registry.size} open session${registry.size === 1 ? '' : 's'})`);
    closing = true;
    copies.close();
    const stopped = new Promise<void>((resolve) => server!.close(() => resolve()));
    await registry.closeAll();
    await settledBackgroundCheckpoints();
    // Streams end once their journal closed; connections still open after the grace period are cut.
    const cut = setTimeout(() => server!.closeAllConnections(), CLOSE_GRACE_MS);
    server.closeIdleConnections();
    await stopped;
    clearTimeout(cut);
    log('stopped');
    return ExitCode.serverShutdown;
  } catch (error) {
    const code = errorCodeOf(error);
    host.stderr.write(`mend: error [${code}]: ${errorMessageOf(error)}\n`);
    copies?.close();
    server?.closeAllConnections();
    server?.close();
    return exitCodeFor(code);
  }
}
