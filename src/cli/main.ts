/**
 * The composition root: the only place that reads argv and the environment and
 * installs signal handlers. It builds the one host environment (store, runtime
 * dependencies, stdio) and hands it to the front end the command line asks for.
 * Returns the exit code; bin/mend.js sets it.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { availableParallelism, homedir, hostname, platform, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { errorCodeOf, errorMessageOf } from '../errors.js';
import type { HostEnv } from '../runtime/host-env.js';
import type { RuntimeDeps } from '../runtime/session-runtime.js';
import { TOOL_NAMES, toolDeclarations } from '../runtime/tool-port.js';
import { buildSystemPrompt, type FrontEndKind } from '../engine/system-prompt.js';
import { toolSessionContext } from '../tools/tool-context.js';
import { DEFAULT_TOOL_ENV_POLICY } from '../tools/tool-env.js';
import { openStore, storeSpec } from '../store/open-store.js';
import { settledCheckpointWrites } from '../runtime/checkpoint/plan-checkpoints.js';
import { ForeignSourcesStore } from '../store/foreign-sources.js';
import { foreignHomesFromEnv } from './foreign-homes-env.js';
import type { SessionStore } from '../store/session-store.js';
import { ExitCode, exitCodeFor, exitCodeForAbort } from '../wire/exit-codes.js';
import { serializeLine } from '../wire/line-framer.js';
import { errorFields, resultMessage } from '../wire/result-lines.js';
import { parseArgs, type OutputFormat, type RunOptions } from './args.js';
import { faultHookFromEnv } from './fault-hook.js';
import { checkpointsFromEnv, outlineFromEnv, outlineScanFromEnv } from './outline-env.js';
import { daemonAcceptCopies, daemonAppendMode, daemonShellWorkers, daemonSseDirect } from './daemon-env.js';
import type { AppendMode } from '../session/queued-append/log-appender.js';
import type { ShellRunner } from '../tools/tool.js';
import { configuredModel, lazyProvider, type ProviderEnv } from './provider-factory.js';
import { MEND_VERSION } from './version.js';
import { selectMcpServers, type McpServerSelection } from './mcp-servers.js';
import { killAllServerGroups } from '../tools/mcp/process-groups.js';

export interface MainIo {
  stdin: NodeJS.ReadStream | (NodeJS.ReadableStream & { isTTY?: boolean });
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  pid: number;
}

function defaultIo(): MainIo {
  // Getters: node makes a stdio stream when it is first asked for, and a run that never
  // reads stdin (a resume, -p TEXT) should not pay for making one (1-2 ms of a start-up).
  return {
    get stdin() {
      return process.stdin;
    },
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    env: process.env,
    cwd: process.cwd(),
    pid: process.pid,
  };
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
    io.stdout.write(serializeLine(resultMessage('', randomUUID, errorFields(code, message))));
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
    MEND_OPENAI_TRANSPORT: env['MEND_OPENAI_TRANSPORT'],
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
export type ComposeOptions = Pick<RunOptions, 'provider' | 'scriptedResponses' | 'baseUrl'> &
  Partial<Pick<RunOptions, 'addDirs' | 'toolEnv' | 'store' | 'fallbackModel'>> & {
    /** The front end the sessions run under: the system prompt says who can answer (default headless). */
    frontEnd?: FrontEndKind | undefined;
    /** A JSONL home of this run's own instead of MEND_HOME / --store (--no-session-persistence). */
    privateHome?: string | undefined;
    /** Other agents' session files open in place through the store (default); false for the store's own commands. */
    foreignSources?: boolean;
    /** How the JSONL store appends (default sync; the daemon: queued, see daemon-env.ts). */
    appendMode?: AppendMode | undefined;
    /** How foreground shell commands run (default inline; the daemon: helper processes, see daemon-env.ts). */
    runShell?: ShellRunner | undefined;
  };

/** The session store the flags and the environment name: --store, else MEND_STORE, else JSONL under MEND_HOME. */
export async function composeStore(io: MainIo, flag: string | undefined, privateHome?: string, appendMode?: AppendMode): Promise<SessionStore> {
  const home = privateHome ?? (io.env['MEND_HOME'] || join(homedir(), '.mend'));
  const faultHook = faultHookFromEnv(io.env['MEND_FAULT'], (msg) => io.stderr.write(`mend[fault]: ${msg}\n`));
  const warn = (message: string) => io.stderr.write(`mend: warning: ${message}\n`);
  const outline = outlineFromEnv(io.env, availableParallelism());
  return openStore(privateHome !== undefined ? 'jsonl' : storeSpec(flag, io.env), io.env, {
    home,
    warn,
    ...(faultHook ? { faultHook } : {}),
    ...(outline !== undefined ? { outline } : {}),
    ...(outlineScanFromEnv(io.env) ? {} : { outlineScan: false }),
    ...checkpointOption(checkpointsFromEnv(io.env, (line) => io.stderr.write(`mend[debug]: ${line}\n`))),
    ...(appendMode !== undefined ? { appendMode } : {}),
  });
}

/**
 * Plan checkpoint writes run after the plan is handed back; a database store needs its
 * connections for them, so they end before it closes (a file store's end with the process).
 */
async function closeStore(store: SessionStore): Promise<void> {
  await settledCheckpointWrites();
  await store.close();
}

function checkpointOption(checkpoints: ReturnType<typeof checkpointsFromEnv>): { checkpoints?: NonNullable<ReturnType<typeof checkpointsFromEnv>> } {
  return checkpoints === undefined ? {} : { checkpoints };
}

export async function compose(io: MainIo, options: ComposeOptions, signal?: AbortSignal): Promise<Composition> {
  const now = () => new Date().toISOString();
  const own = await composeStore(io, options.store, options.privateHome, options.appendMode);
  const foreignHomes = foreignHomesFromEnv(io.env, homedir());
  const store = options.foreignSources === false ? own : new ForeignSourcesStore(own, foreignHomes);
  const env = providerEnv(io.env);
  // Read from the environment now, while it still holds the credentials (main removes them).
  const toolSession = {
    ...toolSessionContext({
      projectRoot: projectRootOf(io.cwd),
      addDirs: (options.addDirs ?? []).map((dir) => resolve(io.cwd, dir)),
      policy: options.toolEnv ?? DEFAULT_TOOL_ENV_POLICY,
      parentEnv: io.env,
      credentialNames: CREDENTIAL_VARIABLES,
    }),
    ...(options.runShell ? { runShell: options.runShell } : {}),
  };
  /** What depends on the project: its root, the tools' boundary and the system prompt naming it. */
  const project = (cwd: string): Pick<RuntimeDeps, 'cwd' | 'scope' | 'toolSession' | 'baseSystemPrompt'> => {
    const projectRoot = projectRootOf(cwd);
    const session = { ...toolSession, projectRoot };
    // Asked for before every model call; the text changes only with the day (and the roots).
    let built: { key: string; text: string } | undefined;
    return {
      cwd,
      scope: { projectRoot, cwd },
      toolSession: session,
      baseSystemPrompt: () => {
        const day = new Date().toISOString().slice(0, 10);
        const key = `${day}\0${session.roots.join('\0')}`;
        if (built?.key !== key) {
          const text = buildSystemPrompt({
            ...(options.frontEnd !== undefined ? { frontEnd: options.frontEnd } : {}),
            projectRoot,
            extraRoots: session.roots,
            platform: platform(),
            date: day,
            tools: toolDeclarations(),
            mendVersion: MEND_VERSION,
          });
          built = { key, text };
        }
        return built.text;
      },
    };
  };
  const runtime: RuntimeDeps = {
    store,
    ...project(io.cwd),
    // MEND_HOSTNAME: the host a writer lease names (tests stand for two machines with it).
    identity: { host: io.env['MEND_HOSTNAME'] || hostname(), pid: io.pid },
    version: MEND_VERSION,
    newId: randomUUID,
    now,
    // process.hrtime rather than performance.now(): the global loads perf_hooks on first use (1.5 ms of a start-up).
    clock: () => Number(process.hrtime.bigint()) / 1e6,
    provider: (model) => lazyProvider({ ...options, model }, env),
    foreignHomes,
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

  if (
    parsed.command === 'plan' ||
    parsed.command === 'repair' ||
    parsed.command === 'sessions-list' ||
    parsed.command === 'sessions-export' ||
    parsed.command === 'sessions-import' ||
    parsed.command === 'store-migrate'
  ) {
    let composed: Composition;
    try {
      composed = await compose(io, {
        provider: undefined,
        scriptedResponses: undefined,
        baseUrl: undefined,
        store: (parsed as { store?: string }).store,
        foreignSources: parsed.command === 'plan' || parsed.command === 'repair' || parsed.command === 'sessions-list',
      });
    } catch (error) {
      io.stderr.write(`mend: error [${errorCodeOf(error)}]: ${errorMessageOf(error)}\n`);
      return exitCodeFor(errorCodeOf(error));
    }
    const commandIo = { runtime: composed.runtime, stdout: io.stdout as HostEnv['stdout'], stderr: io.stderr as HostEnv['stderr'], stdin: io.stdin };
    // `mend sessions list | head -1`: a reader that went away ends the listing quietly (141, as SIGPIPE would).
    let stdoutClosed = false;
    io.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') stdoutClosed = true;
    });
    // A pipe's writes complete later: the EPIPE of the last one arrives after the command
    // returned. Waiting for stdout to take an empty write (its callback runs after every
    // earlier write settled) lets the exit code see it.
    const flushed = () =>
      new Promise<void>((resolve) => ((io.stdout as { writableEnded?: boolean }).writableEnded ? resolve() : io.stdout.write('', () => resolve())));
    const done = async (code: number) => {
      await flushed();
      return stdoutClosed ? ExitCode.stdoutClosed : code;
    };
    try {
      if (parsed.command === 'plan') {
        const { planCommand } = await import('./plan-command.js');
        return done(await planCommand(parsed, commandIo));
      }
      if (parsed.command === 'repair') {
        const { repairCommand } = await import('./repair-command.js');
        return done(await repairCommand(parsed, commandIo));
      }
      if (parsed.command === 'sessions-list') {
        const { sessionsListCommand } = await import('./sessions-command.js');
        return done(await sessionsListCommand(parsed, commandIo));
      }
      const { storeCommand } = await import('./store-command.js');
      return done(await storeCommand(parsed as Parameters<typeof storeCommand>[0], commandIo));
    } finally {
      await closeStore(composed.store);
    }
  }

  const controller = new AbortController();
  if (parsed.command === 'serve') {
    const serve = parsed.options;
    const token = serve.token ?? (io.env['MEND_SERVER_TOKEN']?.trim() || undefined);
    return withSignals(controller, async () => {
      const { runServe } = await import('../frontends/daemon/serve.js');
      // The servers of every daemon session: the rule of a run (flags, then the settings file).
      let mcp: McpServerSelection;
      try {
        mcp = selectMcpServers(
          { mcpConfigs: serve.mcpConfigs ?? [], strictMcpConfig: serve.strictMcpConfig ?? false, allowedMcpServerNames: serve.allowedMcpServerNames },
          { cwd: io.cwd, home: io.env['MEND_HOME'] || join(homedir(), '.mend') },
        );
      } catch (error) {
        return reportEarlyError(io, argv, errorCodeOf(error), errorMessageOf(error));
      }
      // Many sessions on one event loop: durable appends go to the thread pool, shell commands
      // start in small helper processes, and copies of the listening socket keep connections from
      // waiting on a busy loop (daemon-env.ts has the switches back).
      const note = (message: string) => void io.stderr.write(`mend: warning: ${message}\n`);
      const appendMode = daemonAppendMode(io.env, note);
      const shellWorkers = daemonShellWorkers(io.env, note);
      const acceptCopies = daemonAcceptCopies(io.env, note);
      const sseDirect = daemonSseDirect(io.env, note);
      const shells = shellWorkers > 0 ? (await import('../tools/shell-run/worker-shell-runner.js')).workerShellRunner(shellWorkers) : undefined;
      const host = await hostEnv(io, { ...serve, model: serve.model, frontEnd: 'daemon', appendMode, runShell: shells?.run }, controller.signal);
      host.runtime.mcpLog = (line) => {
        if (serve.debug) io.stderr.write(`mend serve: ${line.replace(/[\r\n]+$/, '')}\n`);
      };
      // Sessions stop their servers when they close; whatever is left when the daemon exits is killed here.
      process.once('exit', killAllServerGroups);
      try {
        return await runServe({ ...serve, token, mcpServers: mcp.specs, mcpFailed: mcp.failed, acceptCopies, sseDirect }, host);
      } finally {
        await shells?.close();
        killAllServerGroups();
        await closeStore(host.runtime.store);
      }
    });
  }

  const parsedOptions = parsed.options;
  // --no-session-persistence: the session lives in a private temporary home, removed when the run ends.
  const privateHome = parsedOptions.noSessionPersistence ? mkdtempSync(join(tmpdir(), 'mend-ephemeral-')) : undefined;
  const options = { ...parsedOptions, privateHome, frontEnd: frontEndOf(parsedOptions) };
  return withSignals(
    controller,
    async () => {
      let host: HostEnv;
      try {
        host = await hostEnv(io, options, controller.signal);
      } catch (error) {
        return reportEarlyError(io, argv, errorCodeOf(error), errorMessageOf(error));
      }
      // --debug-file (Claude's SDK passes it for its debug option): the diagnostics go to that file, not stderr.
      const debugFile = options.debugFile === undefined ? undefined : createWriteStream(resolve(io.cwd, options.debugFile), { flags: 'a' });
      if (debugFile) debugFile.on('error', () => undefined);
      const debugOut = debugFile ?? io.stderr;
      // MCP servers' stderr and connection events: the debug log.
      host.runtime.mcpLog = (line) => {
        if (options.debug) debugOut.write(`mend[debug]: ${line.replace(/[\r\n]+$/, '')}\n`);
      };
      // Every exit path stops the servers' process groups (a signal's too: the front end returns first, then this runs).
      process.once('exit', killAllServerGroups);
      let mcp: McpServerSelection;
      try {
        mcp = selectMcpServers(options, { cwd: io.cwd, home: io.env['MEND_HOME'] || join(homedir(), '.mend') });
      } catch (error) {
        return reportEarlyError(io, argv, errorCodeOf(error), errorMessageOf(error));
      }
      try {
        return await runFrontEnd(
          { ...options, mcpServers: mcp.specs, mcpFailed: mcp.failed },
          debugFile ? { ...host, stderr: debugFile as unknown as HostEnv['stderr'] } : host,
        );
      } finally {
        killAllServerGroups();
        debugFile?.end();
        await closeStore(host.runtime.store);
        if (privateHome !== undefined) rmSync(privateHome, { recursive: true, force: true });
      }
    },
    io.stdout,
  );

  /** The front end the command line asks for (also what the system prompt tells the model). */
  function frontEndOf(options: RunOptions): FrontEndKind {
    if (options.acp) return 'acp';
    if (!isHeadless(options) && terminal()) return 'tui';
    return options.inputFormat === 'stream-json' ? 'stream-json' : 'headless';
  }

  // The terminal UI: a TTY on both ends and nothing that asks for a headless run (-p, stream-json, json, a continuation flag).
  function isHeadless(options: RunOptions): boolean {
    return (
      options.prompt !== undefined ||
      options.promptFromStdin ||
      options.inputFormat !== 'text' ||
      options.outputFormat !== 'text' ||
      options.continueInterrupted ||
      options.autoContinue
    );
  }

  // Asked only when it matters: a headless run need not make a stdin stream to learn it is one.
  function terminal(): boolean {
    return (io.stdin as { isTTY?: boolean }).isTTY === true && (io.stdout as { isTTY?: boolean }).isTTY === true;
  }

  async function runFrontEnd(options: RunOptions, host: HostEnv): Promise<number> {
    if (options.acp) {
      const { runAcp } = await import('../frontends/acp/run-acp.js');
      return await runAcp(options, host);
    }
    const headless = isHeadless(options);
    if (options.promptInteractive !== undefined && (headless || !terminal())) {
      return reportEarlyError(
        io,
        argv,
        'usage',
        '-i/--prompt-interactive needs a terminal on stdin and stdout, without -p, --input-format stream-json or -o json|stream-json',
      );
    }
    if (!headless && terminal()) {
      const { runTui } = await import('../frontends/tui/run-tui.js');
      return await runTui(options, host, { noColor: (io.env['NO_COLOR'] ?? '') !== '' });
    }
    if (options.inputFormat === 'stream-json') {
      const { runStreamJson } = await import('../frontends/stream-json/stream-json-server.js');
      return await runStreamJson(options, host);
    }
    const { runHeadless } = await import('../frontends/headless/run-headless.js');
    return await runHeadless(options, host);
  }
}

/**
 * SIGINT, SIGTERM and SIGHUP (the terminal went away) abort the controller with their
 * name while `run` runs: the running turn is recorded as aborted and its tools' process
 * groups are killed. So does a closed stdout (EPIPE: `mend … | head -1`), as
 * 'stdout_closed', instead of an unhandled error's stack trace.
 */
async function withSignals(controller: AbortController, run: () => Promise<number>, stdout?: NodeJS.WritableStream): Promise<number> {
  const handlers = { SIGINT: () => controller.abort('sigint'), SIGTERM: () => controller.abort('sigterm'), SIGHUP: () => controller.abort('sighup') };
  const onStdoutError = (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') controller.abort('stdout_closed');
  };
  for (const [signal, handler] of Object.entries(handlers)) process.on(signal, handler);
  stdout?.on('error', onStdoutError);
  try {
    const code = await run();
    // A closed stdout ends any run the way SIGPIPE would; other stops are the front end's to report.
    return controller.signal.reason === 'stdout_closed' ? exitCodeForAbort('stdout_closed') : code;
  } finally {
    for (const [signal, handler] of Object.entries(handlers)) process.off(signal, handler);
  }
}

async function hostEnv(io: MainIo, options: ComposeOptions & Pick<RunOptions, 'model'>, signal: AbortSignal): Promise<HostEnv> {
  const { runtime, forCwd } = await compose(io, options, signal);
  // Credentials are read once (compose keeps what it needs), then leave the process's
  // environment, so no child inherits them. A tool could still read the start-up block
  // at /proc/<mend pid>/environ; tool output is redacted of these values for that reason.
  if (io.env === process.env) for (const name of CREDENTIAL_VARIABLES) delete process.env[name];
  return {
    // A getter, as in defaultIo: the stream is made by the front end that reads it.
    get stdin() {
      return io.stdin as HostEnv['stdin'];
    },
    stdout: io.stdout as HostEnv['stdout'],
    stderr: io.stderr as HostEnv['stderr'],
    signal,
    runtime,
    runtimeFor: forCwd,
    modelName: (model) => configuredModel({ ...options, model }, providerEnv(io.env)),
    toolNames: TOOL_NAMES,
  };
}
