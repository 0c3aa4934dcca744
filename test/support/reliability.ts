/**
 * Helpers for the reliability tests (test/reliability): the crash test's scenario
 * sandbox run with execa, mode bits, structural comparison of logs, a loopback HTTP
 * server that answers 401 and echoes the credentials it got, and a grep over a tree.
 */
import { existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { BIN } from './cli.js';
import { createScenarioSandbox, scenarioArgs, scenarioEnv, type ScenarioSandbox } from './crash-test-core.js';

export { BIN };

/** A fresh folder for scenario sandboxes (see createScenarioSandbox). */
export function scenarioBase(label: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), `mend-rel-${label}-`)));
}

let sandboxCounter = 0;
export function scenarioSandbox(base: string): ScenarioSandbox {
  return createScenarioSandbox(base, ++sandboxCounter);
}

export interface ScenarioRunOptions {
  mode?: 'new' | 'continue' | 'follow-up';
  env?: Record<string, string>;
  /** Replace `-o stream-json` with this format. */
  outputFormat?: 'text' | 'json' | 'stream-json';
  /** Run through `bash -c '<prefix>; exec node ...'` (e.g. a ulimit). */
  shellPrefix?: string;
  timeout?: number;
}

/** Starts one run of the crash-test scenario in `sb` (by default the first prompt of a new session). */
export function spawnScenario(sb: ScenarioSandbox, opts: ScenarioRunOptions = {}): ResultPromise<{ reject: false }> {
  let args = scenarioArgs(sb, opts.mode ?? 'new');
  if (opts.outputFormat && opts.outputFormat !== 'stream-json') {
    args = args.filter((a) => a !== '--include-partial-messages');
    args[args.indexOf('stream-json')] = opts.outputFormat;
  }
  const env = { ...scenarioEnv(sb), ...(opts.env ?? {}) };
  const common = { cwd: sb.cwd, env, extendEnv: false, reject: false, stdin: 'ignore', stripFinalNewline: false, timeout: opts.timeout ?? 60_000 } as const;
  if (opts.shellPrefix) {
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    return execa('bash', ['-c', `${opts.shellPrefix}; exec ${quoted}`], common) as unknown as ResultPromise<{ reject: false }>;
  }
  return execa(process.execPath, [BIN, ...args], common) as unknown as ResultPromise<{ reject: false }>;
}

export interface Run {
  exitCode: number | undefined;
  signal: string | undefined;
  stdout: string;
  stderr: string;
}

export async function runScenario(sb: ScenarioSandbox, opts: ScenarioRunOptions = {}): Promise<Run> {
  const r = await spawnScenario(sb, opts);
  return { exitCode: r.exitCode, signal: r.signal, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
}

/** Permission bits of a path (no symlink following). */
export function modeOf(path: string): number {
  return lstatSync(path).mode & 0o777;
}

export function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}

/** Every file and folder under `dir` with its permission bits. */
export function modesUnder(dir: string): Array<{ path: string; dir: boolean; mode: string }> {
  const out: Array<{ path: string; dir: boolean; mode: string }> = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      out.push({ path: p, dir: st.isDirectory(), mode: octal(st.mode & 0o777) });
      if (st.isDirectory()) walk(p);
    }
  };
  if (existsSync(dir)) {
    out.push({ path: dir, dir: true, mode: octal(statSync(dir).mode & 0o777) });
    walk(dir);
  }
  return out;
}

/** Files under `dir` whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return hits;
}

/**
 * A log reduced to its structure: uuids become ordinals (parent links keep their shape),
 * timestamps and the session id are blanked. Two runs of the same script must agree.
 */
export function structureOf(lines: string[]): unknown[] {
  const ids = new Map<string, string>();
  const idOf = (u: unknown) => {
    if (typeof u !== 'string') return u;
    if (!ids.has(u)) ids.set(u, `#${ids.size + 1}`);
    return ids.get(u);
  };
  return lines.map((line) => {
    const r = JSON.parse(line) as Record<string, unknown>;
    return { ...r, uuid: idOf(r['uuid']), parentUuid: idOf(r['parentUuid']), timestamp: '<ts>', sessionId: '<sid>' };
  });
}

export function logLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

export interface EchoServer {
  baseURL: string;
  requests: Array<{ url: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/**
 * A loopback "OpenAI" server that refuses every request with 401 and echoes what it got
 * back in its error body: the Authorization header verbatim, the bare key, and both
 * again in `code` and `type`, the way misbehaving proxies do.
 */
export async function startEchoServer(): Promise<EchoServer> {
  const requests: EchoServer['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => {
      const auth = String(req.headers['authorization'] ?? '');
      const key = auth.replace(/^Bearer\s+/i, '');
      res.writeHead(401, { 'content-type': 'application/json', 'x-echo-authorization': auth });
      res.end(
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${key}. You sent the header "Authorization: ${auth}"`,
            type: `invalid_request_error (${auth})`,
            code: `invalid_api_key:${key}`,
            param: auth,
          },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
