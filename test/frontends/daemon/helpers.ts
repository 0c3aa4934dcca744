/**
 * Helpers for tests of the BUILT daemon (`node bin/mend.js serve --port 0`, run
 * `npm run build` first): start it in a sandbox, read its ready line, call it
 * with plain fetch, and end it by its pid.
 */
import { request } from 'node:http';
import { execa, type ResultPromise } from 'execa';
import { ReadyLineSchema, type ReadyLine } from '../../../src/wire/daemon-api.js';
import { BIN, baseEnv, waitFor, type Sandbox } from '../../support/cli.js';
import { outsideTheProcess } from '../../support/outside-the-process.js';

export { killMarkedGroups, markerLines, slowCommand } from '../../support/cli.js';

export interface Daemon {
  url: string;
  pid: number;
  ready: ReadyLine;
  sub: ResultPromise<{ reject: false }>;
  stderr: () => string;
  /** Sends a signal and waits for the exit. */
  stop: (signal?: NodeJS.Signals) => Promise<{ exitCode: number | undefined; signal: string | undefined; stdout: string; stderr: string }>;
}

export interface DaemonOptions {
  args?: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
}

const running = new Set<ResultPromise<{ reject: false }>>();

/** Starts `mend serve --port 0` in the sandbox and resolves with its ready line. */
export async function startDaemon(sb: Sandbox, opts: DaemonOptions = {}): Promise<Daemon> {
  outsideTheProcess('the built CLI');
  const sub = execa('node', [BIN, 'serve', '--port', '0', ...(opts.args ?? [])], {
    cwd: opts.cwd ?? sb.cwd,
    env: baseEnv(sb, opts.env),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: 300_000,
  }) as ResultPromise<{ reject: false }>;
  running.add(sub);
  let stdout = '';
  let stderr = '';
  sub.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  sub.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exited = false;
  void sub.then(() => (exited = true));
  await waitFor(() => stdout.includes('\n') || exited, 20_000, 'the ready line');
  if (!stdout.includes('\n')) throw new Error(`mend serve exited before its ready line: ${stderr}`);
  const ready = ReadyLineSchema.parse(JSON.parse(stdout.split('\n')[0]!));
  return {
    url: ready.url,
    pid: ready.pid,
    ready,
    sub,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (!exited) sub.kill(signal);
      const result = await sub;
      running.delete(sub);
      return { exitCode: result.exitCode, signal: result.signal, stdout, stderr };
    },
  };
}

/** Ends every daemon a test file started and left running (by its own handle). */
export async function stopAllDaemons(): Promise<void> {
  for (const sub of [...running]) {
    sub.kill('SIGKILL');
    await sub;
    running.delete(sub);
  }
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** One JSON call; `body` present -> POST with application/json. */
export async function call<T = Record<string, unknown>>(
  url: string,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<Answer<T>> {
  const hasBody = init.body !== undefined || init.rawBody !== undefined;
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? (hasBody ? 'POST' : 'GET'),
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(hasBody ? { body: init.rawBody ?? JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, body: body as T, headers: response.headers };
}

/**
 * A request with node:http, which sends the headers it is given as they are (fetch
 * replaces Host) and reports an early answer even when the server stops reading the body.
 */
export function rawRequest(
  url: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }> {
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = request(target, { method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'), headers: init.headers ?? {} }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on('error', reject);
    if (init.body !== undefined) req.end(init.body);
    else req.end();
  });
}
