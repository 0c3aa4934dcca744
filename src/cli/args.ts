/**
 * Command-line parsing (yargs). Produces a plain description of what to do; no
 * side effects. Usage problems come back as MendError('usage').
 */
import yargs from 'yargs';
import { MendError } from '../errors.js';
import type { StdioRunOptions } from '../frontends/shared/run-options.js';
import { APPROVAL_MODES, type ApprovalMode } from '../stream/approval-modes.js';
import { exitCodeTableText } from '../stream/exit-codes.js';

export type { OutputFormat } from '../frontends/shared/run-options.js';
export type { ApprovalMode };

/** The stdio front ends' options plus what only the composition root uses (provider choice). */
export interface RunOptions extends StdioRunOptions {
  provider: 'openai' | 'scripted' | undefined;
  baseUrl: string | undefined;
  scriptedResponses: string | undefined;
  /** -i/--prompt-interactive: open the terminal UI with this first prompt. */
  promptInteractive: string | undefined;
}

export type ParsedCommand =
  | { command: 'run'; options: RunOptions }
  | { command: 'plan'; target: string; json: boolean; full: boolean; debug: boolean }
  | { command: 'sessions-list'; json: boolean; debug: boolean }
  | { command: 'help'; text: string }
  | { command: 'version' };

function splitList(values: unknown): string[] {
  const list = Array.isArray(values) ? values : values === undefined ? [] : [values];
  return list.flatMap((v) => String(v).split(',')).map((s) => s.trim()).filter(Boolean);
}

function build(argv: string[]) {
  return yargs(argv)
    .scriptName('mend')
    .help(false)
    .version(false)
    .usage('$0 [-p TEXT] [--continue | --resume ID|PATH] [options]\n\nA headless agent CLI with crash recovery.')
    .command('$0', 'run a prompt, or resume / inspect / continue a session')
    .command('plan <target>', 'print the recovery plan of a session (id or .jsonl path); never writes', (y) =>
      y
        .positional('target', { type: 'string', demandOption: true })
        .option('json', { type: 'boolean', default: false, describe: 'one JSON object' })
        .option('full', { type: 'boolean', default: false, describe: 'with --json: include both histories' }),
    )
    .command('sessions <action>', 'list the sessions of this project', (y) =>
      y.positional('action', { choices: ['list'] as const, demandOption: true }).option('json', { type: 'boolean', default: false }),
    )
    .option('prompt', { alias: 'p', type: 'string', describe: 'the prompt; "-" reads it from stdin' })
    .option('prompt-interactive', { alias: 'i', type: 'string', describe: 'open the interactive terminal UI with this first prompt' })
    .option('continue', { alias: 'c', type: 'boolean', default: false, describe: 'resume the most recent session of this project' })
    .option('resume', { alias: 'r', type: 'string', describe: 'resume a session by UUID, or a .jsonl path' })
    .option('session-id', { type: 'string', describe: 'start a new session with this UUID' })
    .option('fork-session', { type: 'boolean', default: false, describe: 'copy the resumed session into a new one and work there' })
    .option('output-format', { alias: 'o', choices: ['text', 'json', 'stream-json'] as const, default: 'text' as const })
    .option('input-format', { choices: ['text', 'stream-json'] as const, default: 'text' as const })
    .option('include-partial-messages', { type: 'boolean', default: false })
    .option('continue-interrupted', { type: 'boolean', default: false, describe: 'execute the recovery continuation' })
    .option('plan-id', { type: 'string', describe: 'refuse to continue unless the current plan has this id' })
    .option('auto-continue', { type: 'boolean', default: false, describe: 'continue when the plan allows it without confirmation' })
    .option('accept-degraded', { type: 'boolean', default: false, describe: 'allow a new prompt on a degraded history' })
    .option('approval-mode', { choices: APPROVAL_MODES, default: 'default' as const })
    .option('allowed-tools', { type: 'string', array: true, describe: 'tool names allowed without approval (a,b,c)' })
    .option('max-turns', { type: 'number', default: 50 })
    .option('model', { type: 'string' })
    .option('provider', { choices: ['openai', 'scripted'] as const })
    .option('base-url', { type: 'string' })
    .option('scripted-responses', { type: 'string', describe: 'JSON file of scripted model responses' })
    .option('permission-timeout', { type: 'number', default: 60_000, describe: 'ms to wait for a host approval' })
    .option('debug', { type: 'boolean', default: false, describe: 'diagnostics to stderr' })
    .option('channel', { type: 'string', hidden: true })
    .option('verbose', { type: 'boolean', hidden: true })
    .option('help', { alias: 'h', type: 'boolean', describe: 'show help' })
    .option('version', { alias: 'v', type: 'boolean', describe: 'show version' })
    .epilogue(
      `${exitCodeTableText()}\n\nEnvironment: MEND_HOME (default ~/.mend), OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL.`,
    )
    .strict()
    .exitProcess(false)
    .wrap(100)
    .fail((message, error) => {
      throw new MendError('usage', message || error?.message || 'invalid arguments');
    });
}

export async function parseArgs(argv: string[]): Promise<ParsedCommand> {
  const parser = build(argv);
  const a = await parser.parseAsync();
  if (a.help) return { command: 'help', text: await parser.getHelp() };
  if (a.version) return { command: 'version' };

  const [first] = a._;
  if (first === 'plan') return { command: 'plan', target: String(a['target']), json: a.json === true, full: a['full'] === true, debug: a.debug };
  if (first === 'sessions') return { command: 'sessions-list', json: a.json === true, debug: a.debug };
  if (a._.length > 0) throw new MendError('usage', `unexpected argument: ${String(first)}`);

  const prompt = a.prompt;
  const options: RunOptions = {
    prompt: prompt === '-' ? undefined : prompt,
    promptFromStdin: prompt === '-',
    continue: a.continue,
    resume: a.resume,
    sessionId: a['session-id'],
    forkSession: a['fork-session'],
    outputFormat: a['output-format'],
    inputFormat: a['input-format'],
    includePartialMessages: a['include-partial-messages'],
    continueInterrupted: a['continue-interrupted'],
    planId: a['plan-id'],
    autoContinue: a['auto-continue'],
    acceptDegraded: a['accept-degraded'],
    approvalMode: a['approval-mode'],
    allowedTools: splitList(a['allowed-tools']),
    maxTurns: a['max-turns'],
    model: a.model,
    provider: a.provider,
    baseUrl: a['base-url'],
    scriptedResponses: a['scripted-responses'],
    debug: a.debug,
    ignoredFlags: [a.channel !== undefined ? `--channel=${a.channel}` : '', a.verbose ? '--verbose' : ''].filter(Boolean),
    permissionTimeoutMs: a['permission-timeout'],
    promptInteractive: a['prompt-interactive'],
  };
  validateRunOptions(options);
  return { command: 'run', options };
}

function validateRunOptions(o: RunOptions): void {
  const selectors = [o.continue, o.resume !== undefined, o.sessionId !== undefined].filter(Boolean).length;
  if (selectors > 1) throw new MendError('usage', '--continue, --resume and --session-id are mutually exclusive');
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
  if (!Number.isFinite(o.permissionTimeoutMs) || o.permissionTimeoutMs < 0) {
    throw new MendError('usage', '--permission-timeout takes a number of milliseconds');
  }
  if (o.includePartialMessages && o.outputFormat !== 'stream-json') {
    throw new MendError('usage', '--include-partial-messages needs --output-format stream-json');
  }
  if (o.inputFormat === 'stream-json' && o.outputFormat !== 'stream-json') {
    throw new MendError('usage', '--input-format stream-json needs --output-format stream-json');
  }
}
