/**
 * The composition root: the only place that reads argv and the environment and
 * installs signal handlers. It builds the one host environment (store, runtime
 * dependencies, stdio) and hands it to the front end the command line asks for.
 * Returns the exit code; bin/mend.js sets it.
 */
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir, hostname, platform } from 'node:os';
import { join, resolve } from 'node:path';
import { errorCodeOf, errorMessageOf } from '../errors.js';
import type { HostEnv } from '../runtime/host-env.js';
import type { RuntimeDeps } from '../runtime/session-runtime.js';
import { TOOL_NAMES, toolDeclarations } from '../runtime/tool-port.js';
import { buildSystemPrompt } from '../engine/system-prompt.js';
import { toolSessionContext } from '../tools/tool-context.js';
import { DEFAULT_TOOL_ENV_POLICY } from '../tools/tool-env.js';
import { JsonlSessionStore } from '../store/jsonl/jsonl-store.js';
import type { SessionStore } from '../store/session-store.js';
import { ExitCode, exitCodeFor } from '../stream/exit-codes.js';
import { parseArgs, type OutputFormat, type RunOptions } from './args.js';
import { faultHookFromEnv } from './fault-hook.js';
import { configuredModel, lazyProvider, type ProviderEnv } from './provider-factory.js';
import { MEND_VERSION } from './version.js';

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

/** Variables mend reads its own credentials from: never passed to a tool, redacted from tool output. */
export const CREDENTIAL_VARIABLES = ['OPENAI_API_KEY', 'MEND_SERVER_TOKEN'] as const;

function providerEnv(env: NodeJS.ProcessEnv): ProviderEnv {
  return {
    OPENAI_API_KEY: env['OPENAI_API_KEY'],
    OPENAI_BASE_URL: env['OPENAI_BASE_URL'],
    OPENAI_MODEL: env['OPENAI_MODEL'],
    MEND_OPENAI_MAX_RETRIES: env['MEND_OPENAI_MAX_RETRIES'],
  };
}

function projectRootOf(cwd: string): string {
  try {
    return realpathSync(cwd);
  } catch {
    // A cwd that vanished still names the project it was.
    return cwd;
  }
}

export interface Composition {
  store: SessionStore;
  runtime: RuntimeDeps;
  /** The same dependencies for the project of another directory (an ACP session names its own cwd). */
  forCwd: (cwd: string) => RuntimeDeps;
}

/** Everything a runtime needs, from the process's environment and the parsed options. */
export type ComposeOptions = Pick<RunOptions, 'provider' | 'scriptedResponses' | 'baseUrl'> & Partial<Pick<RunOptions, 'addDirs' | 'toolEnv'>>;

export function compose(io: MainIo, options: ComposeOptions, signal?: AbortSignal): Composition {
  const home = io.env['MEND_HOME'] || join(homedir(), '.mend');
  const faultHook = faultHookFromEnv(io.env['MEND_FAULT'], (msg) => io.stderr.write(`mend[fault]: ${msg}\n`));
  const now = () => new Date().toISOString();
  const store = new JsonlSessionStore({ home, faultHook, now });
  const env = providerEnv(io.env);
  // Read from the environment now, while it still holds the credentials (main removes them).
  const toolSession = toolSessionContext({
    projectRoot: projectRootOf(io.cwd),
    addDirs: (options.addDirs ?? []).map((dir) => resolve(io.cwd, dir)),
    policy: options.toolEnv ?? DEFAULT_TOOL_ENV_POLICY,
    parentEnv: io.env,
    credentialNames: CREDENTIAL_VARIABLES,
  });
  /** What depends on the project: its root, the tools' boundary and the system prompt naming it. */
  const project = (cwd: string): Pick<RuntimeDeps, 'cwd' | 'scope' | 'toolSession' | 'baseSystemPrompt'> => {
    const projectRoot = projectRootOf(cwd);
    const session = { ...toolSession, projectRoot };
    return {
      cwd,
      scope: { projectRoot, cwd },
      toolSession: session,
      baseSystemPrompt: () =>
        buildSystemPrompt({
          projectRoot,
          extraRoots: session.roots,
          platform: platform(),
          date: new Date(),
          tools: toolDeclarations(),
          mendVersion: MEND_VERSION,
        }),
    };
  };
  const runtime: RuntimeDeps = {
    store,
    ...project(io.cwd),
    identity: { host: hostname(), pid: io.pid },
    version: MEND_VERSION,
    newId: randomUUID,
    now,
    clock: () => performance.now(),
    provider: (model) => lazyProvider({ ...options, model }, env),
    ...(signal ? { signal } : {}),
  };
  return { store, runtime, forCwd: (cwd) => ({ ...runtime, ...project(cwd) }) };
}

export async function main(argv: string[], io: MainIo = defaultIo()): Promise<number> {
  let parsed;
  try {
    parsed = await parseArgs(argv);
  } catch (error) {
    return reportEarlyError(io, argv, errorCodeOf(error), errorMessageOf(error));
  }

  if (parsed.command === 'help') {
    io.stdout.write(`${parsed.text}\n`);
    return ExitCode.success;
  }
  if (parsed.command === 'version') {
    io.stdout.write(`${MEND_VERSION}\n`);
    return ExitCode.success;
  }

  if (parsed.command === 'plan' || parsed.command === 'sessions-list') {
    const { runtime } = compose(io, { provider: undefined, scriptedResponses: undefined, baseUrl: undefined });
    const commandIo = { runtime, stdout: io.stdout, stderr: io.stderr };
    if (parsed.command === 'plan') {
      const { planCommand } = await import('./plan-command.js');
      return planCommand(parsed, commandIo);
    }
    const { sessionsListCommand } = await import('./sessions-command.js');
    return sessionsListCommand(parsed, commandIo);
  }

  const options = parsed.options;
  const controller = new AbortController();
  const onSigint = () => controller.abort('sigint');
  const onSigterm = () => controller.abort('sigterm');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  try {
    const { runtime, forCwd } = compose(io, options, controller.signal);
    // Credentials are read once (compose keeps what it needs), then leave the process's
    // environment, so no child inherits them. A tool could still read the start-up block
    // at /proc/<mend pid>/environ; tool output is redacted of these values for that reason.
    if (io.env === process.env) for (const name of CREDENTIAL_VARIABLES) delete process.env[name];
    const host: HostEnv = {
      stdin: io.stdin as HostEnv['stdin'],
      stdout: io.stdout as HostEnv['stdout'],
      stderr: io.stderr as HostEnv['stderr'],
      signal: controller.signal,
      runtime,
      runtimeFor: forCwd,
      modelName: (model) => configuredModel({ ...options, model }, providerEnv(io.env)),
      toolNames: TOOL_NAMES,
    };
    if (options.acp) {
      const { runAcp } = await import('../frontends/acp/run-acp.js');
      return await runAcp(options, host);
    }
    if (options.inputFormat === 'stream-json') {
      const { runStreamJson } = await import('../frontends/stream-json/stream-json-server.js');
      return await runStreamJson(options, host);
    }
    const { runHeadless } = await import('../frontends/headless/run-headless.js');
    return await runHeadless(options, host);
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  }
}
