/**
 * Stdio MCP servers run in a process group of their own, so stopping one stops whatever it
 * started; the groups still alive are remembered here so that every exit path of mend can
 * kill them (the composition root calls killAllServerGroups on `exit`).
 *
 * On Linux the server is started through `setsid` (its own session and group, same pid) and
 * `setpriv --pdeathsig KILL` (the kernel kills it when mend dies, SIGKILL of mend included).
 * What the OS cannot do: a grandchild the server started outlives a SIGKILL of mend unless it
 * exits on its own when its stdin closes (most servers do).
 */
import { existsSync } from 'node:fs';

const SETSID = '/usr/bin/setsid';
const SETPRIV = '/usr/bin/setpriv';

const live = new Set<number>();

/** The command line that starts `command args` as a group leader that dies with mend (plain where the tools are missing). */
export function guardedCommand(command: string, args: readonly string[]): { command: string; args: string[] } {
  if (process.platform !== 'linux' || !existsSync(SETSID)) return { command, args: [...args] };
  const deathSignal = existsSync(SETPRIV) ? [SETPRIV, '--pdeathsig', 'KILL', '--'] : [];
  return { command: SETSID, args: [...deathSignal, command, ...args] };
}

/** Whether guardedCommand made the child a group leader (its pid is its group id). */
export function groupsSupported(): boolean {
  return process.platform === 'linux' && existsSync(SETSID);
}

export function rememberGroup(pid: number): void {
  live.add(pid);
}

/** Kills the group (and forgets it); quiet when it is already gone. */
export function killGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(groupsSupported() ? -pid : pid, signal);
  } catch {
    // Already gone.
  }
  if (signal === 'SIGKILL') live.delete(pid);
}

/** Synchronous: safe in an `exit` listener. */
export function killAllServerGroups(): void {
  for (const pid of [...live]) killGroup(pid, 'SIGKILL');
}
