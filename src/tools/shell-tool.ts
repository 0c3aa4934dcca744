/**
 * run_shell_command, named and shaped like Qwen Code's. Each command runs in its own
 * process group, and when a foreground call ends (normally, on timeout or on abort) the
 * whole group is killed, so everything it started dies with it, `cmd &` included: a
 * finished or interrupted turn must not leave orphans running behind a resumed session.
 * A child that calls `setsid` (or `setpgid`) leaves the group and escapes this; only
 * is_background commands are meant to outlive the call.
 *
 * The shell is not confined to the workspace like the file tools: it can do anything the
 * user can. Its environment is ctx.env (see toolEnvironment), never mend's credentials.
 */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { OutputCapper } from './output-cap.js';
import { absoluteToolPath } from './paths.js';
import { ToolErrorType, defineTool, errorOutcome, toolPath, type ToolContext, type ToolOutcome } from './tool.js';
import { DEFAULT_TOOL_ENV_POLICY, toolEnvironment } from './tool-env.js';

export const DEFAULT_SHELL_TIMEOUT_MS = 120_000;
/** After bash exits, how long to keep reading output that is still in the pipes. */
const DRAIN_GRACE_MS = 250;
const MAX_TIMER_MS = 2 ** 31 - 1;

const ShellArgsSchema = z.object({
  command: z.string().min(1).describe('Exact bash command to execute, run as `bash -c <command>`.'),
  description: z.string().optional().describe('Brief description of the command for the user.'),
  directory: toolPath.optional().describe('Directory to run the command in: absolute, or relative to the project root. Defaults to the session directory.'),
  timeout: z.number().int().positive().optional().describe(`Timeout in milliseconds (default ${DEFAULT_SHELL_TIMEOUT_MS}).`),
  is_background: z.boolean().optional().describe('Start the command in the background and return its process id at once (for servers and watchers).'),
});
type ShellArgs = z.output<typeof ShellArgsSchema>;

export const shellTool = defineTool({
  name: 'run_shell_command',
  kind: 'execute',
  description:
    'Executes a bash command (`bash -c <command>`) and returns its combined stdout and stderr and its exit code. ' +
    'The command runs in its own process group; when it ends, times out or is cancelled, the whole group is killed, so processes started with `&` do not outlive it. ' +
    'Use is_background for long-running processes such as servers.',
  argsSchema: ShellArgsSchema,
  async run(args, ctx) {
    const directory = args.directory === undefined ? ctx.cwd : absoluteToolPath(args.directory, ctx);
    const dirError = await checkDirectory(directory);
    if (dirError) return dirError;
    if (ctx.signal.aborted) return abortedOutcome(args.command);
    const env = ctx.env ?? toolEnvironment(process.env, DEFAULT_TOOL_ENV_POLICY, []);
    return args.is_background ? runBackground(args, directory, env) : runForeground(args, directory, env, ctx);
  },
});

async function checkDirectory(directory: string): Promise<ToolOutcome | undefined> {
  try {
    if ((await stat(directory)).isDirectory()) return undefined;
    return errorOutcome(`Directory is not a directory: ${directory}`, ToolErrorType.pathIsNotDirectory);
  } catch {
    return errorOutcome(`Directory not found: ${directory}`, ToolErrorType.fileNotFound);
  }
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

async function runForeground(args: ShellArgs, directory: string, env: Record<string, string>, ctx: ToolContext): Promise<ToolOutcome> {
  const { execa } = await import('execa');
  if (ctx.signal.aborted) return abortedOutcome(args.command);
  // setTimeout fires at once for delays past 2^31-1 ms; a huge timeout means "very long", not "now".
  const timeoutMs = Math.min(args.timeout ?? DEFAULT_SHELL_TIMEOUT_MS, MAX_TIMER_MS);
  const output = new OutputCapper(ctx.outputCap);

  // reject: false turns exit codes and spawn failures into a result we inspect; buffer: false
  // because output is streamed into the capper, so a chatty command cannot exhaust memory.
  const subprocess = execa('bash', ['-c', args.command], {
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
  ctx.signal.addEventListener('abort', onAbort, { once: true });
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
  ctx.signal.removeEventListener('abort', onAbort);

  const exitCode = result.exitCode;
  const signal = result.signal;
  if (exitCode === undefined && signal === undefined && !timedOut && !aborted) {
    // The process never ran (bash missing, spawn refused): report execa's explanation.
    return errorOutcome(`Failed to start command: ${result.shortMessage ?? result.message}`, ToolErrorType.shellFailure);
  }

  const text = output.totalBytes > 0 ? output.text() : '(empty)';
  const lines = [`Command: ${args.command}`, `Directory: ${directory}`, `Output: ${text}`, `Exit code: ${exitCode ?? '(none)'}`];
  if (signal) lines.push(`Signal: ${signal}`);
  if (timedOut) lines.push(`Timed out after ${timeoutMs} ms; the process group was killed.`);
  if (aborted) lines.push('Cancelled; the process group was killed.');
  const summary = lines.join('\n');

  if (aborted) return errorOutcome(summary, ToolErrorType.aborted, text);
  if (timedOut) return errorOutcome(summary, ToolErrorType.shellTimeout, text);
  if (exitCode !== 0) return errorOutcome(summary, ToolErrorType.shellFailure, text);
  return { output: summary, isError: false, display: text };
}

async function runBackground(args: ShellArgs, directory: string, env: Record<string, string>): Promise<ToolOutcome> {
  const { execa } = await import('execa');
  // Its own group, no pipes back to us and unref'd: it outlives this turn and even this process.
  const subprocess = execa('bash', ['-c', args.command], {
    cwd: directory,
    env,
    extendEnv: false,
    detached: true,
    stdio: 'ignore',
    reject: false,
    cleanup: false,
  });
  const pid = subprocess.pid;
  if (pid === undefined) {
    const result = await subprocess;
    return errorOutcome(`Failed to start background command: ${result.shortMessage ?? result.message}`, ToolErrorType.shellFailure);
  }
  subprocess.unref();
  const output = [
    `Command: ${args.command}`,
    `Directory: ${directory}`,
    `Started in background with PID ${pid} (process group ${pid}). Output is not captured.`,
  ].join('\n');
  return { output, isError: false, display: `Background PID ${pid}` };
}

function abortedOutcome(command: string): ToolOutcome {
  return errorOutcome(`Command was cancelled before it started: ${command}`, ToolErrorType.aborted);
}
