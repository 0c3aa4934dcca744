/**
 * Runs the built CLI under `strace -f` and turns the trace into a DiskTrace: the
 * real process, every thread and child, nothing mocked. The sandbox is snapshot
 * first (what was on disk before the run counts as durable).
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { BIN, baseEnv, type Sandbox } from '../cli.js';
import { diskTrace, type DiskTrace, type InitialEntry } from './disk-ops.js';
import { parseStrace } from './strace-log.js';
import { outsideTheProcess } from '../outside-the-process.js';

/** The built CLI to trace; MEND_POWER_LOSS_BIN points the harness at another build (e.g. an older one). */
export const TRACED_BIN = process.env['MEND_POWER_LOSS_BIN'] ?? BIN;

const TRACED_CALLS = [
  'open',
  'openat',
  'creat',
  'write',
  'pwrite64',
  'writev',
  'pwritev',
  'pwritev2',
  'sendto',
  'sendmsg',
  'fsync',
  'fdatasync',
  'sync_file_range',
  'ftruncate',
  'truncate',
  'rename',
  'renameat',
  'renameat2',
  'mkdir',
  'mkdirat',
  'unlink',
  'unlinkat',
  'rmdir',
  'close',
  'clone',
  'clone3',
  'fork',
  'vfork',
  'execve',
];

/** strace is installed and may trace here (a container without ptrace rights cannot). */
export function straceAvailable(): boolean {
  const probe = spawnSync('strace', ['-f', '-o', '/dev/null', 'true'], { encoding: 'utf8' });
  return probe.status === 0;
}

export type Child = ChildProcessByStdio<Writable, Readable, Readable>;

export interface TracedRun {
  trace: DiskTrace;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  syscalls: number;
}

/**
 * Traces one run of `node BIN ...args`. `drive` talks to the process (stdin, stdout)
 * and must make it exit; without it stdin gets `input` (or is closed at once).
 */
export async function tracedRun(
  sb: Sandbox,
  args: string[],
  opts: {
    env?: Record<string, string | undefined>;
    input?: string;
    dbPort?: number;
    drive?: (child: Child, stdout: () => string) => Promise<void>;
    timeoutMs?: number;
  } = {},
): Promise<TracedRun> {
  outsideTheProcess('the built CLI');
  const before = snapshot(sb.root);
  const dir = mkdtempSync(join(tmpdir(), 'mend-strace-'));
  const traceFile = join(dir, 'trace.txt');
  try {
    const child = spawn(
      'strace',
      ['-f', '-yy', '-xx', '-s', '4194304', '-o', traceFile, '-e', `trace=${TRACED_CALLS.join(',')}`, 'node', TRACED_BIN, ...args],
      {
        cwd: sb.cwd,
        env: baseEnv(sb, opts.env),
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 90_000);
    try {
      if (opts.drive) await opts.drive(child, () => stdout);
      else child.stdin.end(opts.input ?? '');
      const exitCode = await exited;
      const calls = parseStrace(readFileSync(traceFile, 'utf8'));
      return { trace: diskTrace(calls, sb.root, sb.cwd, before, opts.dbPort), exitCode, stdout, stderr, syscalls: calls.length };
    } finally {
      clearTimeout(timer);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every folder and file under `root` (folders first), with file contents. */
export function snapshot(root: string): InitialEntry[] {
  const out: InitialEntry[] = [{ path: root, kind: 'dir' }];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = statSync(path);
      if (st.isDirectory()) {
        out.push({ path, kind: 'dir' });
        walk(path);
      } else if (st.isFile()) out.push({ path, kind: 'file', data: readFileSync(path) });
    }
  };
  walk(root);
  return out;
}
