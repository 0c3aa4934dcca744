/**
 * Command-line parsing (yargs, the parser of record; the common run options are read
 * without it, see quick-args.ts). Produces a plain description of what to do; no side
 * effects. Usage problems come back as MendError('usage').
 */
import type yargsFactory from 'yargs';
import type { Argv } from 'yargs';
import { MendError } from '../errors.js';
import type { ServeOptions } from '../frontends/daemon/serve.js';
import type { StdioRunOptions } from '../frontends/shared/run-options.js';
import { APPROVAL_MODES, REFUSED_APPROVAL_MODES, approvalModeFromAlias, type ApprovalMode } from '../wire/approval-modes.js';
import {
  CLAUDE_BOOLEAN_FLAGS,
  CLAUDE_IGNORED_FLAGS,
  CLAUDE_REFUSED_FLAGS,
  CLAUDE_REFUSED_REASONS,
  NO_PERSISTENCE_REASON,
  coreToolsOf,
  permissionPromptsOf,
  toolRules,
} from './claude-flags.js';
import { exitCodeTableText } from '../wire/exit-codes.js';
import { DEFAULT_TOOL_ENV_POLICY, parseToolEnvPolicy, type ToolEnvPolicy } from '../tools/tool-env.js';
import { quickArgs } from './quick-args.js';
import { INPUT_FORMATS, OUTPUT_FORMATS, PROVIDERS, RUN_DEFAULTS } from './run-option-values.js';

export type { OutputFormat } from '../frontends/shared/run-options.js';
export type { ApprovalMode };

/** The stdio front ends' options plus what only the composition root uses (provider choice). */
export interface RunOptions extends StdioRunOptions {
  provider: 'openai' | 'scripted' | undefined;
  baseUrl: string | undefined;
  scriptedResponses: string | undefined;
  /** --store: jsonl or a postgres:// URL (else MEND_STORE, else jsonl). */
  store: string | undefined;
  /** --add-dir / --include-directories: more directories the file tools may use. */
  addDirs: string[];
  toolEnv: ToolEnvPolicy;
  systemPrompt: string | undefined;
  appendSystemPrompt: string | undefined;
  /** -i/--prompt-interactive: open the terminal UI with this first prompt. */
  promptInteractive: string | undefined;
  /** --fallback-model: asked when the main model's request fails before any output. */
  fallbackModel?: string | undefined;
  /** --no-session-persistence (Claude's persistSession: false): nothing is kept after the run. */
  noSessionPersistence: boolean;
  /** --debug-file: diagnostics go to this file instead of stderr. */
  debugFile?: string | undefined;
  /** `--acp`: serve the Agent Client Protocol on stdio (an editor drives the sessions). */
  acp: boolean;
  /** --mcp-config values (a file path or JSON text), resolved by the composition root. */
  mcpConfigs: string[];
  /** --allowed-mcp-server-names: only these servers start (undefined: all). */
  allowedMcpServerNames: string[] | undefined;
  /** --strict-mcp-config: the settings file's servers are left out. */
  strictMcpConfig: boolean;
}

/** Whose sessions `sessions list` shows. */
export type SessionsAgent = 'mend' | 'claude' | 'codex' | 'gemini' | 'all';

export type ParsedCommand =
  | { command: 'run'; options: RunOptions }
  | { command: 'plan'; target: string; json: boolean; full: boolean; debug: boolean; store: string | undefined }
  | { command: 'repair'; target: string; json: boolean; debug: boolean; store: string | undefined }
  | { command: 'sessions-list'; json: boolean; debug: boolean; store: string | undefined; agent: SessionsAgent }
  | { command: 'sessions-export'; target: string; store: string | undefined }
  | { command: 'sessions-import'; source: string; store: string | undefined }
  | { command: 'store-migrate'; store: string | undefined }
  /** `token` is the --token flag only; the composition root falls back to MEND_SERVER_TOKEN. */
  | { command: 'serve'; options: ServeOptions & Pick<RunOptions, 'provider' | 'baseUrl' | 'scriptedResponses' | 'store'> }
  | { command: 'help'; text: string }
  | { command: 'version' };

/**
 * A scalar option given twice takes the LAST value (said in --help). yargs would hand over
 * an array, and an array slips past checks written for one value: `--approval-mode plan
 * --approval-mode plan` once lost plan's hard deny. Each value was checked against the
 * option's choices by yargs already.
 */
function last<T>(value: T | T[]): T {
  return Array.isArray(value) ? (value.at(-1) as T) : value;
}

/** Options that name a session, a model, a URL or a file: a value that looks like a flag is a mistake or an injection. */
const VALUE_OPTIONS = ['resume', 'sessionId', 'planId', 'model', 'fallbackModel', 'baseUrl', 'scriptedResponses'] as const;

function splitList(values: unknown): string[] {
  const list = Array.isArray(values) ? values : values === undefined ? [] : [values];
  return list
    .flatMap((v) => String(v).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

type Yargs = ReturnType<typeof yargsFactory>;

const STORE_OPTION = {
  type: 'string',
  describe: 'session store: jsonl (default, under MEND_HOME) or a postgres:// URL (also MEND_STORE, PG* variables)',
} as const;

/** The subcommands: what each takes, shared by the parser and by `mend COMMAND --help`. */
const SUBCOMMANDS = {
  plan: {
    usage: 'plan <target> [--json [--full]]',
    describe: "print the recovery plan of a session (id or path: mend's, Claude Code's, Codex's or Gemini CLI's); never writes",
    builder: <T>(y: Argv<T>) =>
      y
        .positional('target', { type: 'string', demandOption: true, describe: 'a session id of this project, or a .jsonl path' })
        .option('json', { type: 'boolean', default: false, describe: 'one JSON object' })
        .option('full', { type: 'boolean', default: false, describe: 'with --json: include both histories' }),
  },
  repair: {
    usage: 'repair <path> [--json]',
    describe: "write a repaired copy of another agent's session (Claude Code, Codex, Gemini CLI) for that agent to resume; the source is never modified",
    builder: <T>(y: Argv<T>) =>
      y
        .positional('target', { type: 'string', demandOption: true, describe: "the agent's session file" })
        .option('json', { type: 'boolean', default: false, describe: 'one JSON object' }),
  },
  sessions: {
    usage: 'sessions list [--json] [--agent mend|claude|codex|gemini|all] | sessions export <id|path> | sessions import <FILE|->',
    describe: 'list the sessions of this project; export one as ndjson; import one (FILE or - for stdin)',
    builder: <T>(y: Argv<T>) =>
      y
        .positional('action', { choices: ['list', 'export', 'import'] as const, demandOption: true, describe: 'list, export or import' })
        .positional('target', { type: 'string', describe: 'export: a session id or path; import: a file, or - for stdin' })
        .option('json', { type: 'boolean', default: false, describe: 'list: one JSON object per session' })
        .option('agent', {
          type: 'string',
          choices: ['mend', 'claude', 'codex', 'gemini', 'all'] as const,
          describe: "list: this project's sessions in another agent's home (read in place, never written); all: mend's and every agent's",
        }),
  },
  store: {
    usage: 'store migrate [--store postgres://…]',
    describe: 'manage the session store (migrate: create or upgrade the PostgreSQL schema)',
    builder: <T>(y: Argv<T>) => y.positional('action', { choices: ['migrate'] as const, demandOption: true, describe: 'migrate' }),
  },
  serve: {
    usage: 'serve [--host H] [--port N] [--root DIR ...] [--token T] [model options]',
    describe: 'run the HTTP daemon (REST + SSE) for the sessions of one or more project roots',
    builder: <T>(y: Argv<T>) =>
      y
        .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on; anything but loopback needs a token' })
        .option('port', { type: 'number', default: 0, describe: 'port to listen on; 0 picks a free one (see the ready line)' })
        .option('root', { type: 'string', array: true, describe: 'a project root sessions may live under (repeatable; default: the current directory)' })
        .option('token', { type: 'string', describe: 'bearer token clients must send (default: $MEND_SERVER_TOKEN)' })
        // The defaults of every session the daemon opens, as a run takes them.
        .option('system-prompt', { type: 'string', describe: 'replace the built-in system prompt' })
        .option('append-system-prompt', { type: 'string', describe: 'append text to the system prompt' })
        .option('core-tools', { type: 'string', array: true, describe: 'offer only these tools to the model (a,b)' })
        .option('exclude-tools', {
          type: 'string',
          array: true,
          describe: 'never offer these tools to the model (a,b; Claude names and Bash(cmd:*) rules too)',
        }),
  },
} as const;

type SubcommandName = keyof typeof SUBCOMMANDS;

/** The run options `mend serve` reads too: the model and the defaults of its sessions. */
const SHARED_RUN_OPTIONS = {
  'approval-mode': {
    alias: 'permission-mode',
    type: 'string',
    default: RUN_DEFAULTS['approval-mode'],
    describe: `${APPROVAL_MODES.join(' | ')} (Claude's acceptEdits and bypassPermissions are accepted)`,
  },
  'allowed-tools': {
    alias: 'allowedTools',
    type: 'string',
    array: true,
    describe: 'tool names allowed without approval (a,b,c; Claude names and Bash(cmd:*) rules too)',
  },
  'max-turns': { type: 'number', default: RUN_DEFAULTS['max-turns'], describe: 'model requests a turn may make before it stops (error_max_turns)' },
  model: { type: 'string', describe: 'the model name (default: $OPENAI_MODEL)' },
  provider: { choices: PROVIDERS, describe: 'openai (any OpenAI-compatible server) or scripted (--scripted-responses)' },
  'base-url': { type: 'string', describe: 'the OpenAI-compatible server, http(s)://… (default: $OPENAI_BASE_URL)' },
  'scripted-responses': { type: 'string', describe: 'JSON file of scripted model responses (see docs/scripted-responses.md)' },
  'permission-timeout': { type: 'number', default: RUN_DEFAULTS['permission-timeout'], describe: 'ms to wait for a host approval' },
  debug: { type: 'boolean', default: RUN_DEFAULTS.debug, describe: 'diagnostics to stderr' },
  'mcp-config': {
    type: 'string',
    array: true,
    describe: 'MCP servers: a JSON file or JSON text {"mcpServers": {name: {command, args, env} | {type: "http"|"sse", url, headers}}} (repeatable)',
  },
  'strict-mcp-config': { type: 'boolean', describe: "use only the --mcp-config servers, not the settings file's" },
  'allowed-mcp-server-names': { type: 'string', array: true, describe: 'start only these MCP servers (a,b)' },
} as const;

const ENVIRONMENT_HELP =
  'Environment: MEND_HOME (sessions, default ~/.mend), MEND_STORE (jsonl or a postgres:// URL, as --store), ' +
  'PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE (a postgres store), OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, ' +
  'MEND_SERVER_TOKEN (mend serve), NO_COLOR (the terminal UI).';

/**
 * `mend plan --help` and the like: that command's own options (and the shared --store,
 * --debug), not the ~60 options of a run. The command's positionals are not demanded here,
 * so asking for help never fails for want of them.
 */
async function subcommandHelp(yargs: typeof yargsFactory, name: SubcommandName): Promise<string> {
  const sub = SUBCOMMANDS[name];
  let parser: Yargs = yargs([]).scriptName('mend').help(false).version(false).usage(`$0 ${sub.usage}\n\n${sub.describe}`).wrap(100);
  parser = sub.builder(parser) as Yargs;
  if (name !== 'serve') parser = parser.option('debug', { type: 'boolean', describe: 'diagnostics to stderr' });
  parser = parser.option('store', STORE_OPTION);
  if (name === 'serve') parser = parser.options(SHARED_RUN_OPTIONS);
  return (await parser.option('help', { alias: 'h', type: 'boolean', describe: 'show help' }).epilogue(ENVIRONMENT_HELP).getHelp()) as string;
}

function build(yargs: typeof yargsFactory, argv: string[]) {
  const parser = yargs(argv)
    .scriptName('mend')
    .help(false)
    .version(false)
    .usage('$0 [-p TEXT] [--continue | --resume ID|PATH] [options]\n\nA headless agent CLI with crash recovery.')
    .command('$0', 'run a prompt, or resume / inspect / continue a session')
    .command('plan <target>', SUBCOMMANDS.plan.describe, SUBCOMMANDS.plan.builder)
    .command('repair <target>', SUBCOMMANDS.repair.describe, SUBCOMMANDS.repair.builder)
    .command('sessions <action> [target]', SUBCOMMANDS.sessions.describe, SUBCOMMANDS.sessions.builder)
    .command('store <action>', SUBCOMMANDS.store.describe, SUBCOMMANDS.store.builder)
    .option('store', STORE_OPTION)
    .command('serve', SUBCOMMANDS.serve.describe, SUBCOMMANDS.serve.builder)
    .option('prompt', { alias: 'p', type: 'string', describe: 'the prompt; "-" reads it from stdin' })
    .option('prompt-interactive', { alias: 'i', type: 'string', describe: 'open the interactive terminal UI with this first prompt' })
    .option('continue', { alias: 'c', type: 'boolean', default: RUN_DEFAULTS.continue, describe: 'resume the most recent session of this project' })
    .option('resume', {
      alias: 'r',
      type: 'string',
      describe: "resume a session by UUID, or a path (mend's .jsonl, or a Claude Code, Codex or Gemini CLI session: read in place, continued in a mend copy)",
    })
    .option('session-id', { type: 'string', describe: 'start a new session with this UUID' })
    .option('fork-session', { type: 'boolean', default: RUN_DEFAULTS['fork-session'], describe: 'copy the resumed session into a new one and work there' })
    .option('output-format', {
      alias: 'o',
      choices: OUTPUT_FORMATS,
      default: RUN_DEFAULTS['output-format'],
      describe: 'text (the answer), json (one result object) or stream-json (every message, docs/protocol.md)',
    })
    .option('input-format', {
      choices: INPUT_FORMATS,
      default: RUN_DEFAULTS['input-format'],
      describe: 'stream-json: read user messages and control requests as JSON lines on stdin (needs -o stream-json)',
    })
    .option('acp', { type: 'boolean', default: RUN_DEFAULTS.acp, describe: 'run as an Agent Client Protocol agent on stdio (for editors such as Zed)' })
    .option('include-partial-messages', {
      type: 'boolean',
      default: RUN_DEFAULTS['include-partial-messages'],
      describe: 'with -o stream-json: also stream_event lines as the model writes',
    })
    .options(SHARED_RUN_OPTIONS)
    .option('continue-interrupted', { type: 'boolean', default: RUN_DEFAULTS['continue-interrupted'], describe: 'execute the recovery continuation' })
    .option('plan-id', { type: 'string', describe: 'refuse to continue unless the current plan has this id' })
    .option('auto-continue', { type: 'boolean', default: RUN_DEFAULTS['auto-continue'], describe: 'continue when the plan allows it without confirmation' })
    .option('accept-degraded', { type: 'boolean', default: RUN_DEFAULTS['accept-degraded'], describe: 'allow a new prompt on a degraded history' })
    .option('tools', { type: 'string', array: true, describe: 'offer only these tools (a,b; "default": all), as Claude Code\'s --tools' })
    .option('permission-prompt-tool', {
      type: 'string',
      describe: "stdio: ask the stream-json host before tools that need approval (Claude Code's canUseTool)",
    })
    .option('debug-file', { type: 'string', describe: 'write the --debug diagnostics to this file (implies --debug)' })
    .option('fallback-model', { type: 'string', describe: 'model to ask when the main one fails before answering (OpenAI-compatible provider)' })
    .option('add-dir', {
      alias: 'include-directories',
      type: 'string',
      array: true,
      describe: 'another directory the file tools may use besides the project root (repeatable; a,b)',
    })
    .option('tool-env', {
      type: 'string',
      describe: 'environment of tool commands: scrub (default: no credentials or *_KEY/*_TOKEN/*_SECRET/*PASSWORD*), inherit, or allow:A,B',
    })
    .option('system-prompt', { type: 'string', describe: 'replace the built-in system prompt' })
    .option('append-system-prompt', { type: 'string', describe: 'append text to the system prompt' })
    .option('channel', { type: 'string', hidden: true })
    .option('verbose', {
      type: 'boolean',
      default: RUN_DEFAULTS.verbose,
      describe:
        "text output: every step's text, not only the final answer; with --input-format stream-json: Claude Code's permission rule (ask the host only with --permission-prompt-tool=stdio)",
    })
    .option('core-tools', { type: 'string', array: true, describe: 'offer only these tools to the model (a,b)' })
    .option('exclude-tools', {
      alias: 'disallowedTools',
      type: 'string',
      array: true,
      describe: 'never offer these tools to the model (a,b; Claude names and Bash(cmd:*) rules too)',
    })
    .option('max-session-turns', { type: 'number', hidden: true, describe: "Qwen Code's name for --max-turns" })
    .option('help', { alias: 'h', type: 'boolean', describe: 'show help' })
    .option('version', { alias: 'v', type: 'boolean', describe: 'show version' })
    .epilogue(
      `Run \`mend plan|repair|sessions|store|serve --help\` for a command's own options.\nAn option given twice takes its last value; list options (--allowed-tools, --add-dir) accumulate.\n\n${exitCodeTableText()}\n\n${ENVIRONMENT_HELP}`,
    )
    .strict()
    // Without camelCase twins an unknown flag is named once ("bogus-flag", not also "bogusFlag").
    .parserConfiguration({ 'camel-case-expansion': false })
    .exitProcess(false)
    .wrap(100)
    .fail((message, error) => {
      throw new MendError('usage', (message || error?.message || 'invalid arguments') + promptHint(argv));
    });
  // Compatibility flags of other hosts' SDKs, hidden; added one by one so they do not widen the parsed type.
  for (const flag of [...IGNORED_VALUE_FLAGS, ...REFUSED_FLAGS, ...CLAUDE_IGNORED_FLAGS, ...CLAUDE_REFUSED_FLAGS])
    parser.option(flag, { type: 'string', hidden: true });
  for (const flag of CLAUDE_BOOLEAN_FLAGS) parser.option(flag, { type: 'boolean', hidden: true });
  parser.option('session-persistence', { type: 'boolean', hidden: true });
  return parser;
}

/** The arguments as yargs hands them over. */
type Args = Awaited<ReturnType<ReturnType<typeof build>['parseAsync']>>;

export async function parseArgs(argv: string[]): Promise<ParsedCommand> {
  // Most command lines are read without yargs (quick-args.ts); the same code turns them into a command.
  const quick = quickArgs(argv);
  if (quick !== null) return commandOf(quick as Args);
  return await parseWithYargs(argv);
}

/** Every command line through yargs, the parser of record (tests compare the quick reading with it). */
export async function parseWithYargs(argv: string[]): Promise<ParsedCommand> {
  // Imported here: a run the quick reading serves never loads yargs.
  const { default: yargs } = await import('yargs');
  const sub = helpedSubcommand(argv);
  if (sub !== undefined) return { command: 'help', text: await subcommandHelp(yargs, sub) };
  const parser = build(yargs, argv);
  const a = await parser.parseAsync();
  if (a.help) return { command: 'help', text: await parser.getHelp() };
  if (a.version) return { command: 'version' };
  return commandOf(a);
}

/** `mend "fix the test"`: a prompt given as a bare word. Say how a prompt is given. */
function promptHint(argv: readonly string[]): string {
  const first = argv[0];
  if (first === undefined || first.startsWith('-') || Object.hasOwn(SUBCOMMANDS, first)) return '';
  return `; to run a prompt, use -p ${JSON.stringify(first)} (headless) or -i ${JSON.stringify(first)} (the terminal UI)`;
}

/** The subcommand whose help `argv` asks for (`mend plan --help`, `mend sessions -h`), if any. */
function helpedSubcommand(argv: readonly string[]): SubcommandName | undefined {
  const end = argv.indexOf('--');
  const args = end === -1 ? argv : argv.slice(0, end);
  if (!args.some((a) => a === '--help' || a === '-h')) return undefined;
  const first = args.find((a) => !a.startsWith('-'));
  return first !== undefined && Object.hasOwn(SUBCOMMANDS, first) && args.indexOf(first) === 0 ? (first as SubcommandName) : undefined;
}

function commandOf(a: Args): ParsedCommand {
  const [first] = a._;
  const store = last(a.store);
  if (first === 'plan') return { command: 'plan', target: String(a['target']), json: a.json === true, full: a['full'] === true, debug: a.debug, store };
  if (first === 'repair') return { command: 'repair', target: String(a['target']), json: a.json === true, debug: a.debug, store };
  if (first === 'sessions') {
    const action = last(a['action'] as string);
    const target = a['target'] === undefined ? undefined : String(a['target']);
    if (action === 'export') {
      if (target === undefined) throw new MendError('usage', 'mend sessions export needs a session id or path');
      return { command: 'sessions-export', target, store };
    }
    if (action === 'import') return { command: 'sessions-import', source: target ?? '-', store };
    return {
      command: 'sessions-list',
      json: a.json === true,
      debug: a.debug,
      store,
      agent: (last(a['agent'] as string | undefined) ?? 'mend') as SessionsAgent,
    };
  }
  if (first === 'store') return { command: 'store-migrate', store };
  if (first === 'serve') return { command: 'serve', options: { ...serveOptions(a), store } };
  if (a._.length > 0) throw new MendError('usage', `unexpected argument: ${String(first)}`);

  const prompt = last(a.prompt);
  const modeName = last(a['approval-mode']);
  const claudeIgnored = [...CLAUDE_IGNORED_FLAGS, ...CLAUDE_BOOLEAN_FLAGS].filter((f) => a[f] !== undefined && a[f] !== false);
  const options: RunOptions = {
    prompt: prompt === '-' ? undefined : prompt,
    promptFromStdin: prompt === '-',
    // Claude Code: with both --continue and --resume, the named session wins.
    continue: last(a.continue) && a.resume === undefined,
    resume: last(a.resume),
    sessionId: last(a['session-id']),
    forkSession: last(a['fork-session']),
    outputFormat: last(a['output-format']),
    inputFormat: last(a['input-format']),
    includePartialMessages: last(a['include-partial-messages']),
    continueInterrupted: last(a['continue-interrupted']),
    planId: last(a['plan-id']),
    autoContinue: last(a['auto-continue']),
    acceptDegraded: last(a['accept-degraded']),
    approvalMode: approvalModeOf(modeName),
    approvalModeName: modeName,
    permissionPrompts: permissionPromptsOf(last(a['permission-prompt-tool']), a),
    allowedTools: toolRules('--allowed-tools', splitList(a['allowed-tools'])),
    maxTurns: last(a['max-session-turns'] ?? a['max-turns']),
    model: last(a.model),
    // Qwen's SDK sends a comma list; the first model is the fallback.
    fallbackModel: last(a['fallback-model'])?.split(',')[0]?.trim() || undefined,
    provider: last(a.provider),
    baseUrl: last(a['base-url']),
    scriptedResponses: last(a['scripted-responses']),
    debug: last(a.debug) || last(a['debug-file']) !== undefined,
    debugFile: last(a['debug-file']),
    noSessionPersistence: a['session-persistence'] === false,
    verbose: last(a.verbose) === true,
    ignoredFlags: [
      a.channel !== undefined ? `--channel=${a.channel}` : '',
      ...IGNORED_VALUE_FLAGS.filter((f) => a[f] !== undefined).map((f) => `--${f}`),
      ...claudeIgnored.map((f) => `--${f}`),
    ].filter(Boolean),
    coreTools: coreToolsOf(a),
    excludeTools: toolRules('--disallowedTools/--exclude-tools', splitList(a['exclude-tools'])),
    permissionTimeoutMs: last(a['permission-timeout']),
    addDirs: splitList(a['add-dir']),
    toolEnv: toolEnvOf(last(a['tool-env'])),
    systemPrompt: last(a['system-prompt']),
    appendSystemPrompt: last(a['append-system-prompt']),
    promptInteractive: last(a['prompt-interactive']),
    store,
    acp: last(a.acp) === true,
    mcpConfigs: ((a['mcp-config'] as string[] | undefined) ?? []).map(String),
    allowedMcpServerNames: a['allowed-mcp-server-names'] === undefined ? undefined : splitList(a['allowed-mcp-server-names']),
    strictMcpConfig: a['strict-mcp-config'] === true,
  };
  validateRunOptions(options, a);
  return { command: 'run', options };
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Flags other hosts' SDKs pass that mean nothing to mend (debug-noted): Qwen Code's
 * SDK sends them for its own features (subagents, extensions, MCP, worktrees).
 */
const IGNORED_VALUE_FLAGS = ['auth-type', 'max-tool-calls', 'max-subagent-depth', 'extensions', 'disabled-slash-commands', 'worktree'] as const;
/** Flags whose meaning mend cannot honour, where silently ignoring them would surprise (a sandbox, TLS, a proxy). */
const REFUSED_FLAGS = ['sandbox', 'safe-mode', 'insecure', 'proxy'] as const;

function approvalModeOf(value: string): ApprovalMode {
  const mode = approvalModeFromAlias(value);
  if (mode) return mode;
  throw new MendError(
    'usage',
    `--approval-mode ${JSON.stringify(value)} is not a mode mend has: use ${APPROVAL_MODES.join(', ')} (or Claude's acceptEdits, bypassPermissions, dontAsk). ` +
      (Object.hasOwn(REFUSED_APPROVAL_MODES, value) ? REFUSED_APPROVAL_MODES[value] : ''),
  );
}

function toolEnvOf(value: string | undefined): ToolEnvPolicy {
  if (value === undefined) return DEFAULT_TOOL_ENV_POLICY;
  const parsed = parseToolEnvPolicy(value);
  if (!parsed.ok) throw new MendError('usage', parsed.error);
  return parsed.policy;
}

function serveOptions(a: Record<string, unknown>): Omit<Extract<ParsedCommand, { command: 'serve' }>['options'], 'store'> {
  const runOnly = ['prompt', 'resume', 'session-id']
    .filter((k) => a[k] !== undefined)
    .concat(['continue', 'fork-session', 'continue-interrupted', 'auto-continue'].filter((k) => a[k] === true));
  if (runOnly.length > 0) throw new MendError('usage', `mend serve does not take --${runOnly[0]}: sessions are opened through its API`);
  const port = a['port'] as number;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new MendError('usage', '--port takes a whole number from 0 to 65535');
  const token = a['token'] as string | undefined;
  if (token !== undefined && token.trim() === '') throw new MendError('usage', '--token must not be empty');
  const host = String(a['host']).trim();
  if (host === '') throw new MendError('usage', '--host must not be empty');
  const maxTurns = a['max-turns'] as number;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new MendError('usage', '--max-turns takes a whole number >= 1');
  const permissionTimeoutMs = a['permission-timeout'] as number;
  if (!Number.isFinite(permissionTimeoutMs) || permissionTimeoutMs < 0) throw new MendError('usage', '--permission-timeout takes a number of milliseconds');
  return {
    host,
    port,
    roots: ((a['root'] as string[] | undefined) ?? []).map(String),
    token: token?.trim(),
    approvalMode: approvalModeOf(last(a['approval-mode'] as string)),
    allowedTools: splitList(a['allowed-tools']),
    maxTurns,
    model: a['model'] as string | undefined,
    systemPrompt: last(a['system-prompt'] as string | string[] | undefined),
    appendSystemPrompt: last(a['append-system-prompt'] as string | string[] | undefined),
    coreTools: coreToolsOf(a),
    excludeTools: toolRules('--disallowedTools/--exclude-tools', splitList(a['exclude-tools'])),
    permissionTimeoutMs,
    debug: a['debug'] === true,
    provider: a['provider'] as RunOptions['provider'],
    baseUrl: a['base-url'] as string | undefined,
    scriptedResponses: a['scripted-responses'] as string | undefined,
    mcpConfigs: ((a['mcp-config'] as string[] | undefined) ?? []).map(String),
    allowedMcpServerNames: a['allowed-mcp-server-names'] === undefined ? undefined : splitList(a['allowed-mcp-server-names']),
    strictMcpConfig: a['strict-mcp-config'] === true,
  };
}

function validateRunOptions(o: RunOptions, a: Record<string, unknown> = {}): void {
  for (const flag of REFUSED_FLAGS) {
    if (a[flag] !== undefined)
      throw new MendError('usage', `--${flag} is not supported by mend: it has no sandbox and makes model requests directly; remove the flag`);
  }
  for (const key of VALUE_OPTIONS) {
    const value = o[key];
    if (value === undefined) continue;
    const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    // An empty --resume is refused where every --resume value is judged (invalid_resume_target).
    if (value.trim() === '' && key !== 'resume') throw new MendError('usage', `${flag} needs a value`);
    if (value.startsWith('-'))
      throw new MendError(
        'usage',
        `${flag} got ${JSON.stringify(value)}, which looks like a flag (session ids, model names, URLs and paths never start with '-')`,
      );
  }
  if (o.sessionId !== undefined && (o.continue || o.resume !== undefined || a['continue'] === true)) {
    throw new MendError('usage', '--session-id cannot be combined with --continue or --resume');
  }
  if (o.noSessionPersistence && (o.continue || o.resume !== undefined || o.store !== undefined)) {
    throw new MendError('usage', `--no-session-persistence cannot be combined with --continue, --resume or --store: ${NO_PERSISTENCE_REASON}`);
  }
  for (const flag of CLAUDE_REFUSED_FLAGS) {
    if (a[flag] !== undefined) throw new MendError('usage', `--${flag} is not supported by mend: ${CLAUDE_REFUSED_REASONS[flag]}`);
  }
  if (o.forkSession && !o.continue && o.resume === undefined) {
    throw new MendError('usage', '--fork-session needs --continue or --resume');
  }
  const resuming = o.continue || o.resume !== undefined;
  if (o.continueInterrupted && (o.prompt !== undefined || o.promptFromStdin)) {
    throw new MendError('usage', '--continue-interrupted cannot be combined with -p/--prompt');
  }
  if ((o.continueInterrupted || o.autoContinue || o.acceptDegraded) && !resuming) {
    throw new MendError('usage', '--continue-interrupted, --auto-continue and --accept-degraded need --continue or --resume');
  }
  if (o.planId !== undefined && !o.continueInterrupted && !o.autoContinue) {
    throw new MendError('usage', '--plan-id goes with --continue-interrupted or --auto-continue');
  }
  if (o.promptInteractive !== undefined && (o.prompt !== undefined || o.promptFromStdin)) {
    throw new MendError('usage', '-i/--prompt-interactive cannot be combined with -p/--prompt');
  }
  if (!Number.isInteger(o.maxTurns) || o.maxTurns < 1) throw new MendError('usage', '--max-turns takes a whole number >= 1');
  // setTimeout fires at once past 2^31-1 ms, which would deny every tool instantly.
  if (!Number.isInteger(o.permissionTimeoutMs) || o.permissionTimeoutMs < 0 || o.permissionTimeoutMs > MAX_TIMER_MS) {
    throw new MendError('usage', `--permission-timeout takes a whole number of milliseconds from 0 to ${MAX_TIMER_MS}`);
  }
  if (o.includePartialMessages && o.outputFormat !== 'stream-json') {
    throw new MendError('usage', '--include-partial-messages needs --output-format stream-json');
  }
  if (o.acp) {
    const clashing = [
      o.prompt !== undefined || o.promptFromStdin ? '-p/--prompt' : '',
      o.continue ? '--continue' : '',
      o.resume !== undefined ? '--resume' : '',
      o.sessionId !== undefined ? '--session-id' : '',
      o.forkSession ? '--fork-session' : '',
      o.inputFormat !== 'text' ? '--input-format' : '',
      o.outputFormat !== 'text' ? '--output-format' : '',
      o.continueInterrupted || o.autoContinue || o.acceptDegraded ? '--continue-interrupted/--auto-continue/--accept-degraded' : '',
    ].filter(Boolean);
    if (clashing.length > 0) throw new MendError('usage', `--acp takes sessions from the editor; it cannot be combined with ${clashing.join(', ')}`);
  }
  if (o.inputFormat === 'stream-json' && o.outputFormat !== 'stream-json') {
    throw new MendError('usage', '--input-format stream-json needs --output-format stream-json');
  }
}
