/**
 * The choices and defaults of the run options, for both readings of a command line:
 * yargs (args.ts) and the quick one (quick-args.ts).
 */
export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;
export const INPUT_FORMATS = ['text', 'stream-json'] as const;
export const PROVIDERS = ['openai', 'scripted'] as const;

/** What an option is when it is not given, by its long flag. */
export const RUN_DEFAULTS = {
  continue: false,
  'fork-session': false,
  'output-format': 'text',
  'input-format': 'text',
  acp: false,
  'include-partial-messages': false,
  'continue-interrupted': false,
  'auto-continue': false,
  'accept-degraded': false,
  'approval-mode': 'default',
  'max-turns': 50,
  'permission-timeout': 60_000,
  debug: false,
  verbose: false,
} as const;
