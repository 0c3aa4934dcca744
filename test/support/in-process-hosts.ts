/**
 * ACP and the daemon in process, on one runtime fixture (no spawn): the ACP agent
 * over an in-memory stream pair with the SDK's own client, the daemon's Hono app
 * called through `fetch` (its guards included). For fast checks that two front
 * ends answer the same beside the end-to-end suites of the built CLI.
 */
import { PassThrough } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { AcpAgent, type AcpOptions } from '../../src/frontends/acp/acp-agent.js';
import { createApp } from '../../src/frontends/daemon/app.js';
import { DEFAULT_LIMITS } from '../../src/frontends/daemon/serve.js';
import { SessionRegistry } from '../../src/frontends/daemon/session-registry.js';
import type { HostEnv } from '../../src/runtime/host-env.js';
import type { HostOptions } from '../../src/runtime/runtime-settings.js';
import type { RuntimeFixture } from './runtime.js';

export function hostEnvOf(fixture: RuntimeFixture, signal: AbortSignal = new AbortController().signal): HostEnv {
  return {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    signal,
    runtime: fixture.deps,
    modelName: (model) => model ?? 'scripted',
    toolNames: ['read_file', 'write_file', 'run_shell_command'],
  };
}

export const ACP_OPTIONS: AcpOptions = {
  model: undefined,
  approvalMode: 'default',
  allowedTools: [],
  maxTurns: 10,
  systemPrompt: undefined,
  appendSystemPrompt: undefined,
  coreTools: undefined,
  excludeTools: [],
  debug: false,
};

/** A byte stream pair in memory: what one side writes the other reads. */
export function memoryPair(): { a: acp.Stream; b: acp.Stream } {
  const aToB = new TransformStream<Uint8Array, Uint8Array>();
  const bToA = new TransformStream<Uint8Array, Uint8Array>();
  return { a: acp.ndJsonStream(aToB.writable, bToA.readable), b: acp.ndJsonStream(bToA.writable, aToB.readable) };
}

export interface InProcessAcp {
  agent: acp.ClientContext;
  updates: acp.SessionNotification[];
  updatesOf(sessionId: string): acp.SessionUpdate[];
  close(): Promise<void>;
}

/** The ACP agent on an in-memory pair, driven by the SDK's client; `body` runs while connected. */
export async function withInProcessAcp<T>(fixture: RuntimeFixture, body: (run: InProcessAcp) => Promise<T>, options: Partial<AcpOptions> = {}): Promise<T> {
  const pair = memoryPair();
  const agent = new AcpAgent({ ...ACP_OPTIONS, ...options }, hostEnvOf(fixture));
  const connection = agent.app().connect(pair.a);
  const updates: acp.SessionNotification[] = [];
  const client = acp
    .client({ name: 'mend-test' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, () => ({ outcome: { outcome: 'cancelled' } }) as acp.RequestPermissionResponse);
  let value!: T;
  try {
    await client.connectWith(pair.b, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      value = await body({
        agent: ctx,
        updates,
        updatesOf: (sessionId) => updates.filter((n) => n.sessionId === sessionId).map((n) => n.update),
        close: () => agent.closeAll(),
      });
    });
  } finally {
    await agent.closeAll();
    connection.close();
  }
  return value;
}

export interface InProcessDaemon {
  registry: SessionRegistry;
  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

/** The daemon's app over the fixture's store, without a socket. */
export function inProcessDaemon(fixture: RuntimeFixture, options: Partial<HostOptions> = {}): InProcessDaemon {
  const port = 4999;
  const registry = new SessionRegistry({
    runtime: fixture.deps,
    roots: [fixture.cwd],
    options: { model: undefined, approvalMode: 'default', allowedTools: [], maxTurns: 10, ...options },
    session: {
      now: fixture.deps.now,
      journal: { maxEvents: 4096, maxBytes: 8 * 1024 * 1024, maxQueued: 2048 },
      maxPendingPrompts: 5,
      permissionTimeoutMs: 0,
      modelName: (model) => model ?? 'scripted',
      toolNames: ['read_file', 'write_file', 'run_shell_command'],
      log: () => {},
    },
  });
  const app = createApp({
    registry,
    guard: { host: '127.0.0.1', port: () => port, token: undefined, maxBodyBytes: 1024 * 1024, closing: () => false },
    limits: DEFAULT_LIMITS,
    version: fixture.deps.version,
    roots: [fixture.cwd],
    log: () => {},
  });
  return {
    registry,
    async call<T>(method: string, path: string, body?: unknown) {
      const response = await app.fetch(
        new Request(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { host: `127.0.0.1:${port}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        }),
      );
      const text = await response.text();
      return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as T };
    },
    close: () => registry.closeAll(),
  };
}
