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
import { absoluteToolPath } from './paths.js';
import { ToolErrorType, defineTool, errorOutcome, toolPath, type ToolOutcome } from './tool.js';
import { DEFAULT_TOOL_ENV_POLICY, toolEnvironment } from './tool-env.js';
import { abortedOutcome, runForegroundCommand } from './shell-run/foreground-command.js';

export const DEFAULT_SHELL_TIMEOUT_MS = 120_000;
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
    if (args.is_background) return runBackground(args, directory, env);
    // setTimeout fires at once for delays past 2^31-1 ms; a huge timeout means "very long", not "now".
    const timeoutMs = Math.min(args.timeout ?? DEFAULT_SHELL_TIMEOUT_MS, MAX_TIMER_MS);
    // Inline by default; a host that serves many sessions runs commands in helper processes (ctx.runShell).
    return (ctx.runShell ?? runForegroundCommand)({ command: args.command, directory, env, timeoutMs, outputCap: ctx.outputCap }, ctx.signal);
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
