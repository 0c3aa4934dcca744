/**
 * Runs a real peer CLI against the model mock: `killMidTool` starts it in a process group of
 * its own, waits until the slow shell command has started (its marker line exists) and the
 * session file holds what the CLI writes before running a tool, then kill -9s the whole group,
 * and the groups of any process still running with the sandbox's HOME (a tool's shell may run
 * in a session of its own). `runToExit` runs a resume to its end.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startModelMock, type ModelMock } from './model-mock.js';
import type { PeerAgent, PeerLayout } from './peer-agents.js';
import { outsideTheProcess } from '../outside-the-process.js';

export interface PeerSandbox {
  layout: PeerLayout;
  root: string;
  env: NodeJS.ProcessEnv;
  mock: ModelMock;
}

export async function peerSandbox(agent: PeerAgent, root = mkdtempSync(join(tmpdir(), `mend-peer-${agent.name}-`))): Promise<PeerSandbox> {
  outsideTheProcess(`the real ${agent.name} CLI`);
  const layout: PeerLayout = { home: join(root, 'home'), cwd: join(root, 'project'), marker: join(root, 'marker.log') };
  mkdirSync(layout.home, { recursive: true });
  mkdirSync(layout.cwd, { recursive: true });
  const mock = await startModelMock(agent.answer(layout));
  const env = agent.prepare(layout, mock.origin);
  return { layout, root, env, mock };
}

/** How many times the slow command started. */
export function markerCount(layout: PeerLayout): number {
  if (!existsSync(layout.marker)) return 0;
  return readFileSync(layout.marker, 'utf8')
    .split('\n')
    .filter((l) => l === 'ran').length;
}

async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Process ids that run with this sandbox's HOME: the CLI and everything it started (each
 * sandbox has a HOME of its own, so these are ours and nobody else's).
 */
function pidsOfSandbox(home: string): number[] {
  const needle = `HOME=${home}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (`${readFileSync(`/proc/${entry}/environ`, 'latin1')}\0`.includes(needle)) pids.push(Number(entry));
    } catch {
      // gone already, or not ours to read
    }
  }
  return pids;
}

/** A process's group id (field 5 of /proc/PID/stat, after the parenthesised name). */
function groupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[2]);
  } catch {
    return null;
  }
}

export interface KilledRun {
  /** The session file the CLI left (the newest under its home). */
  sessionFile: string;
  stdout: string;
  stderr: string;
}

export async function killMidTool(
  agent: PeerAgent,
  sandbox: PeerSandbox,
  prompt: string,
  opts: { sessionHolds?: string; timeoutMs?: number } = {},
): Promise<KilledRun> {
  const binary = agent.binary();
  if (!binary) throw new Error(`${agent.name} CLI not installed`);
  const child = spawn(binary, agent.firstArgs(prompt), { cwd: sandbox.layout.cwd, env: sandbox.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let done = false;
  void exited.then(() => (done = true));
  const timeoutMs = opts.timeoutMs ?? 120_000;
  try {
    await waitUntil(() => markerCount(sandbox.layout) > 0 || done, timeoutMs, `${agent.name} to start the slow command`);
    if (done) throw new Error(`${agent.name} exited before running the tool\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr.slice(-2000)}`);
    const holds = opts.sessionHolds;
    if (holds !== undefined) {
      await waitUntil(
        () => agent.sessionFiles(sandbox.layout.home).some((f) => readFileSync(f, 'utf8').includes(holds)),
        20_000,
        `${agent.name}'s session to hold ${holds}`,
      );
    } else {
      await new Promise((r) => setTimeout(r, 1_500));
    }
  } finally {
    if (child.pid !== undefined && !done) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    // The tool's shell may run in a group (and session) of its own: end those too.
    const ours = groupOf(process.pid);
    for (const pid of pidsOfSandbox(sandbox.layout.home)) {
      const group = groupOf(pid);
      try {
        if (group !== null && group !== ours) process.kill(-group, 'SIGKILL');
        else process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
  const files = agent.sessionFiles(sandbox.layout.home);
  const sessionFile = files.at(-1);
  if (!sessionFile) throw new Error(`${agent.name} left no session file\nstderr: ${stderr.slice(-2000)}`);
  return { sessionFile, stdout, stderr };
}

export interface FinishedRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export async function runToExit(binary: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<FinishedRun> {
  const child = spawn(binary, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timeoutMs = opts.timeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      reject(new Error(`${binary} ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      // The group may hold helpers the CLI started and left behind.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // none left
        }
      }
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export function writeJson(path: string, value: unknown): void {
  writeFileSync(path, JSON.stringify(value, null, 2));
}
