/**
 * The command lines most runs have (`--resume ID -o stream-json`, `-p TEXT`), read
 * without yargs: building and running the yargs parser took 8-10 ms of a
 * start-up whose whole budget beyond node's own is about 90 ms. yargs stays the parser
 * of record: help, errors, commands and every flag not listed here go to it, and the
 * quick reading hands the same parsed arguments to the same code after it (args.ts,
 * `commandOf`). test/cli/quick-args.test.ts holds both readings equal on generated
 * command lines.
 *
 * The reading itself is node's own util.parseArgs, strict: an unknown flag, a value
 * that looks like a flag, a positional or `--` makes it give up. This module gives up
 * too (null) on what yargs reads its own way: short flags run together, `--no-x`, an
 * option given twice (yargs makes a list of it), a value outside an option's choices,
 * a value starting with '-' (even a lone '-').
 */
import { parseArgs as parseFlags } from 'node:util';
import { INPUT_FORMATS, OUTPUT_FORMATS, PROVIDERS, RUN_DEFAULTS } from './run-option-values.js';

interface QuickOption {
  type: 'string' | 'boolean';
  short?: string;
  choices?: readonly string[];
}

const string: QuickOption = { type: 'string' };
const boolean: QuickOption = { type: 'boolean' };

/** The run options read here, by their yargs names (the long flags). */
export const QUICK_OPTIONS: Readonly<Record<string, QuickOption>> = {
  prompt: { type: 'string', short: 'p' },
  continue: { type: 'boolean', short: 'c' },
  resume: { type: 'string', short: 'r' },
  'session-id': string,
  'fork-session': boolean,
  'output-format': { type: 'string', short: 'o', choices: OUTPUT_FORMATS },
  'input-format': { type: 'string', choices: INPUT_FORMATS },
  'include-partial-messages': boolean,
  'continue-interrupted': boolean,
  'plan-id': string,
  'auto-continue': boolean,
  'accept-degraded': boolean,
  model: string,
  provider: { type: 'string', choices: PROVIDERS },
  'base-url': string,
  'scripted-responses': string,
  store: string,
  'system-prompt': string,
  'append-system-prompt': string,
  debug: boolean,
  verbose: boolean,
};

const FLAG_OPTIONS = Object.fromEntries(
  Object.entries(QUICK_OPTIONS).map(([name, o]) => [name, o.short === undefined ? { type: o.type } : { type: o.type, short: o.short }]),
);

/**
 * The arguments as yargs hands them over (its defaults included), or null when yargs
 * must read this command line.
 */
export function quickArgs(argv: readonly string[]): Record<string, unknown> | null {
  // Short flags run together (-cp) and negations are read by yargs' own rules.
  if (argv.some((a) => /^-[^-]./.test(a) || a.startsWith('--no-'))) return null;
  let tokens;
  try {
    ({ tokens } = parseFlags({ args: [...argv], options: FLAG_OPTIONS, strict: true, allowPositionals: false, tokens: true }));
  } catch {
    return null;
  }
  const args: Record<string, unknown> = { _: [], ...RUN_DEFAULTS };
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') return null;
    if (seen.has(token.name)) return null;
    seen.add(token.name);
    const option = QUICK_OPTIONS[token.name]!;
    const value = option.type === 'boolean' ? true : token.value;
    // yargs reads a lone '-' after a flag as an argument of its own (`-p -` is yargs' to read).
    if (typeof value === 'string' && value.startsWith('-')) return null;
    if (option.choices !== undefined && !option.choices.includes(value as string)) return null;
    args[token.name] = value;
  }
  return args;
}
