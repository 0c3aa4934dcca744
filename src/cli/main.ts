/**
 * The composition root: the only place that reads argv and the environment and
 * installs signal handlers. Returns the exit code; bin/mend.js sets it.
 */
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isMendError } from '../errors.js';
import { parseArgs, type OutputFormat } from './args.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { MEND_VERSION } from './version.js';
import { faultHookFromEnv } from './fault-hook.js';

export interface MainIo {
  stdin: NodeJS.ReadStream | (NodeJS.ReadableStream & { isTTY?: boolean });
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  pid: number;
}

function defaultIo(): MainIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), pid: process.pid };
}

function outputFormatOf(argv: string[]): OutputFormat {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = a === '-o' || a === '--output-format' ? argv[i + 1] : a?.startsWith('--output-format=') ? a.slice(16) : undefined;
    if (v === 'json' || v === 'stream-json' || v === 'text') return v;
  }
  return 'text';
}

/** A usage error is reported in the format the caller asked for, even though parsing failed. */
function reportEarlyError(io: MainIo, argv: string[], code: string, message: string): number {
  const format = outputFormatOf(argv);
  if (format === 'text') {
    io.stderr.write(`mend: error [${code}]: ${message} (see mend --help)\n`);
  } else {
    io.stdout.write(
      `${JSON.stringify({
        type: 'result',
        subtype: 'error_during_execution',
        uuid: randomUUID(),
        session_id: '',
        is_error: true,
        duration_ms: 0,
        duration_api_ms: 0,
        num_turns: 0,
        usage: { input_tokens: 0, output_tokens: 0 },
        permission_denials: [],
        error: { code, message },
      })}\n`,
    );
  }
  return exitCodeFor(code);
}

export async function main(argv: string[], io: MainIo = defaultIo()): Promise<number> {
  let parsed;
  try {
    parsed = await parseArgs(argv);
  } catch (error) {
    const code = isMendError(error) ? error.code : 'usage';
    return reportEarlyError(io, argv, code, error instanceof Error ? error.message : String(error));
  }

  if (parsed.command === 'help') {
    io.stdout.write(`${parsed.text}\n`);
    return ExitCode.success;
  }
  if (parsed.command === 'version') {
    io.stdout.write(`${MEND_VERSION}\n`);
    return ExitCode.success;
  }

  const home = io.env['MEND_HOME'] || join(homedir(), '.mend');
  let projectRoot = io.cwd;
  try {
    projectRoot = realpathSync(io.cwd);
  } catch {
    // A cwd that vanished still names the project it was.
  }
  const session = {
    home,
    projectRoot,
    cwd: io.cwd,
    pid: io.pid,
    version: MEND_VERSION,
    newId: randomUUID,
    now: () => new Date().toISOString(),
    faultHook: faultHookFromEnv(io.env['MEND_FAULT'], (msg) => io.stderr.write(`mend[fault]: ${msg}\n`)),
  };

  if (parsed.command === 'plan') {
    const { planCommand } = await import('./plan-command.js');
    return planCommand(parsed, { session, stdout: io.stdout, stderr: io.stderr });
  }
  if (parsed.command === 'sessions-list') {
    const { sessionsListCommand } = await import('./sessions-command.js');
    return sessionsListCommand(parsed, { session, stdout: io.stdout, stderr: io.stderr });
  }

  const controller = new AbortController();
  const onSigint = () => controller.abort('sigint');
  const onSigterm = () => controller.abort('sigterm');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  try {
    const { runCommand } = await import('./run-command.js');
    return await runCommand(parsed.options, {
      stdin: io.stdin as never,
      stdout: io.stdout as never,
      stderr: io.stderr as never,
      env: io.env,
      session,
      signal: controller.signal,
      clock: () => performance.now(),
    });
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  }
}
