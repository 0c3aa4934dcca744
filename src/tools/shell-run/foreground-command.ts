/**
 * One foreground shell command, start to end: `bash -c` in a process group of its own,
 * output streamed into the capper, the whole group killed when the call ends (normally,
 * on timeout or on abort). Free of the tool context, so that it runs the same inline
 * (the default) and in a helper process (worker-shell-runner.ts).
 */
import { OutputCapper } from '../output-cap.js';
import { ToolErrorType, errorOutcome, type ForegroundCommand, type ToolOutcome } from '../tool.js';

export type { ForegroundCommand, ShellRunner } from '../tool.js';

/** After bash exits, how long to keep reading output that is still in the pipes. */
const DRAIN_GRACE_MS = 250;

export function abortedOutcome(command: string): ToolOutcome {
  return errorOutcome(`Command was cancelled before it started: ${command}`, ToolErrorType.aborted);
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    // Negative pid: the whole group that `detached: true` made this process the leader of.
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Runs one foreground command to its end (or its timeout, or the signal) in a process group of its own. */
export async function runForegroundCommand(run: ForegroundCommand, signal: AbortSignal): Promise<ToolOutcome> {
  const { execa } = await import('execa');
  if (signal.aborted) return abortedOutcome(run.command);
  const { directory, env, timeoutMs } = run;
  const output = new OutputCapper(run.outputCap);

  // reject: false turns exit codes and spawn failures into a result we inspect; buffer: false
  // because output is streamed into the capper, so a chatty command cannot exhaust memory.
  const subprocess = execa('bash', ['-c', run.command], {
    cwd: directory,
    env,
    extendEnv: false,
    detached: true,
    stdin: 'ignore',
    all: true,
    buffer: false,
    reject: false,
  });
  subprocess.all?.on('data', (chunk: Buffer) => output.push(chunk));

  let timedOut = false;
  let aborted = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(subprocess.pid);
  }, timeoutMs);
  const onAbort = (): void => {
    aborted = true;
    killGroup(subprocess.pid);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  // A background child (`cmd &`) inherits the pipes and keeps them open after bash exits;
  // waiting for them to close would wait for that child. Read what is buffered, then stop.
  let drainTimer: NodeJS.Timeout | undefined;
  subprocess.once('exit', () => {
    // The call is over: what it left running in its group (`cmd &`) goes too. What those
    // children already wrote stays readable in the pipes for the drain below.
    killGroup(subprocess.pid);
    drainTimer = setTimeout(() => {
      subprocess.all?.destroy();
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }, DRAIN_GRACE_MS);
  });

  const result = await subprocess;
  clearTimeout(timer);
  clearTimeout(drainTimer);
  signal.removeEventListener('abort', onAbort);

  const exitCode = result.exitCode;
  const killedBy = result.signal;
  if (exitCode === undefined && killedBy === undefined && !timedOut && !aborted) {
    // The process never ran (bash missing, spawn refused): report execa's explanation.
    return errorOutcome(`Failed to start command: ${result.shortMessage ?? result.message}`, ToolErrorType.shellFailure);
  }

  const text = output.totalBytes > 0 ? output.text() : '(empty)';
  const lines = [`Command: ${run.command}`, `Directory: ${directory}`, `Output: ${text}`, `Exit code: ${exitCode ?? '(none)'}`];
  if (killedBy) lines.push(`Signal: ${killedBy}`);
  if (timedOut) lines.push(`Timed out after ${timeoutMs} ms; the process group was killed.`);
  if (aborted) lines.push('Cancelled; the process group was killed.');
  const summary = lines.join('\n');

  if (aborted) return errorOutcome(summary, ToolErrorType.aborted, text);
  if (timedOut) return errorOutcome(summary, ToolErrorType.shellTimeout, text);
  if (exitCode !== 0) return errorOutcome(summary, ToolErrorType.shellFailure, text);
  return { output: summary, isError: false, display: text };
}
