/**
 * MCP test servers (fixtures/mcp, written with the MCP SDK) and what a test reads from
 * them: a `--mcp-config` value for the stdio one, a started Streamable HTTP one, and the
 * call log both append to when a call starts (so calls are counted on the server side).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, readLog, sessionFiles, type Sandbox } from './cli.js';
import type { ChatRecord } from '../../src/session/records.js';

export const STDIO_SERVER = join(REPO_ROOT, 'fixtures', 'mcp', 'stdio-server.mjs');
export const HTTP_SERVER = join(REPO_ROOT, 'fixtures', 'mcp', 'http-server.mjs');

export interface LoggedCall {
  server: string;
  tool?: string;
  args?: Record<string, unknown>;
  pid?: number;
  cancelled?: string;
}

export function readCallLog(path: string): LoggedCall[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LoggedCall);
}

/** `{"mcpServers": {name: stdio fixture}}`, with the call log in its env. */
export function stdioConfig(name: string, callLog: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [STDIO_SERVER], env: { MCP_CALL_LOG: callLog, MCP_SERVER_NAME: name }, ...extra };
}

export function mcpConfigJson(servers: Record<string, unknown>): string {
  return JSON.stringify({ mcpServers: servers });
}

export interface HttpFixture {
  url: string;
  child: ChildProcess;
  close(): void;
}

export async function startHttpFixture(callLog: string, env: Record<string, string> = {}): Promise<HttpFixture> {
  const child = spawn(process.execPath, [HTTP_SERVER], { env: { ...process.env, MCP_CALL_LOG: callLog, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split('\n')[0];
      if (text.includes('\n') && line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`http fixture exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child, close: () => child.kill('SIGKILL') };
}

/** Whether a process is alive (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every record of the sandbox's sessions. */
export function readRecords(sb: Sandbox): ChatRecord[] {
  return sessionFiles(sb).flatMap((path) => readLog(path));
}

/** Pids of the mend CLIs this process started (any SDK), read from /proc: a test kills them with SIGKILL. */
export function mendChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('bin/mend.js')) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}
