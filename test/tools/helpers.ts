import { readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_OUTPUT_CAP, type ToolContext } from '../../src/tools/tool.js';

export async function makeTempDir(): Promise<string> {
  // realpath: on some systems the temp dir is behind a symlink, and tools report real paths.
  return realpath(await mkdtemp(join(tmpdir(), 'mend-tools-')));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export function context(cwd: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return { cwd, signal: new AbortController().signal, outputCap: DEFAULT_OUTPUT_CAP, ...overrides };
}

/** Alive and not a zombie: in containers nobody may reap an orphan, so a dead process can linger as Z. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}

export async function waitUntilGone(pid: number, timeoutMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !isAlive(pid);
}

/** Cleanup for tests: kills the process and, when it leads one, its group. */
export function killQuietly(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // already gone, or not a group leader
    }
  }
}
