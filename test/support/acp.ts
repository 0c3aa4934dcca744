/**
 * Drives the BUILT `mend --acp` over stdio with the ACP SDK's own client
 * (`acp.client()...connectWith`), as an editor would. Besides what the client
 * sees (updates, permission requests), it keeps the raw order of the agent's
 * stdout lines, so a test can say what reached the wire before an answer.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import type { Readable as NodeReadable, Writable as NodeWritable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { BIN, baseEnv, waitFor, type Sandbox } from './cli.js';
import { outsideTheProcess } from './outside-the-process.js';

export type PermissionAnswer = (request: acp.RequestPermissionRequest) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;

export interface AcpRun {
  agent: acp.ClientContext;
  child: ChildProcessByStdio<NodeWritable, NodeReadable, NodeReadable>;
  /** Every session/update the client received, in order. */
  updates: acp.SessionNotification[];
  permissions: acp.RequestPermissionRequest[];
  /** The agent's stdout, one parsed JSON-RPC message per line, in wire order. */
  wire: Array<Record<string, unknown>>;
  stderr: () => string;
  /** Initializes with the given client capabilities (notices advertised by default). */
  initialize: (capabilities?: acp.ClientCapabilities) => Promise<acp.InitializeResponse>;
  /** The updates of one session (optionally from index `from` of `updates`). */
  updatesOf: (sessionId: string, from?: number) => acp.SessionUpdate[];
  waitForUpdate: (pred: (u: acp.SessionUpdate) => boolean, timeoutMs?: number) => Promise<acp.SessionUpdate>;
}

export interface AcpRunOptions {
  args?: string[];
  env?: Record<string, string | undefined>;
  permission?: PermissionAnswer;
}

export const allow = (optionId = 'allow_once'): acp.RequestPermissionResponse => ({ outcome: { outcome: 'selected', optionId } });

/** Spawns `mend --acp`, connects the SDK client, runs `body`, then closes stdin and waits for the exit. */
export async function withAcp<T>(
  sb: Sandbox,
  opts: AcpRunOptions,
  body: (run: AcpRun) => Promise<T>,
): Promise<{ value: T; exitCode: number | null; stderr: string }> {
  outsideTheProcess('the built CLI');
  const child = spawn('node', [BIN, '--acp', ...(opts.args ?? [])], {
    cwd: sb.cwd,
    env: baseEnv(sb, opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let raw = '';
  const wire: Array<Record<string, unknown>> = [];
  child.stdout.on('data', (d: Buffer) => {
    raw += d.toString();
    let nl: number;
    while ((nl = raw.indexOf('\n')) >= 0) {
      const line = raw.slice(0, nl);
      raw = raw.slice(nl + 1);
      if (line.trim() !== '') wire.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const app = acp
    .client({ name: 'mend-test' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      return opts.permission ? opts.permission(params) : { outcome: { outcome: 'cancelled' } };
    });
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
  );

  let value!: T;
  try {
    await app.connectWith(stream, async (agent) => {
      const run: AcpRun = {
        agent,
        child,
        updates,
        permissions,
        wire,
        stderr: () => stderr,
        initialize: (capabilities = { session: { notices: {} } }) =>
          agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: capabilities }),
        updatesOf: (sessionId, from = 0) =>
          updates
            .slice(from)
            .filter((n) => n.sessionId === sessionId)
            .map((n) => n.update),
        async waitForUpdate(pred, timeoutMs = 45_000) {
          let found: acp.SessionUpdate | undefined;
          await waitFor(() => (found = updates.map((n) => n.update).find(pred)) !== undefined, timeoutMs, 'a session/update');
          return found!;
        },
      };
      value = await body(run);
    });
  } finally {
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  return { value, exitCode: await exited, stderr };
}

/** Index in `wire` of the response to the request with this JSON-RPC id. */
export function responseIndex(wire: ReadonlyArray<Record<string, unknown>>, id: unknown): number {
  return wire.findIndex((m) => m['id'] === id && !('method' in m));
}

/** The session/update notifications on the wire for one session, with their wire positions. */
export function wireUpdates(wire: ReadonlyArray<Record<string, unknown>>, sessionId: string): Array<{ index: number; update: Record<string, unknown> }> {
  const out: Array<{ index: number; update: Record<string, unknown> }> = [];
  wire.forEach((m, index) => {
    const params = m['params'] as { sessionId?: unknown; update?: Record<string, unknown> } | undefined;
    if (m['method'] === 'session/update' && params?.sessionId === sessionId && params.update) out.push({ index, update: params.update });
  });
  return out;
}
