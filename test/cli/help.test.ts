/**
 * `mend --help` and each command's own help: a command's help answers (exit 0) with that
 * command's options, not the run's; every listed option says what it does; the
 * environment section names every variable mend reads.
 */
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args.js';
import type { MendError } from '../../src/errors.js';

async function helpText(argv: string[]): Promise<string> {
  const parsed = await parseArgs(argv);
  if (parsed.command !== 'help') throw new Error(`not help: ${parsed.command}`);
  return parsed.text;
}

/** The option lines of a help text: `  -o, --output-format  description  [type]`. */
function optionLines(text: string): string[] {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (/^\s+(-\w, )?--[\w-]+/.test(lines[i]!)) out.push(lines[i]!);
  }
  return out;
}

async function usageError(argv: string[]): Promise<MendError> {
  try {
    await parseArgs(argv);
  } catch (error) {
    return error as MendError;
  }
  throw new Error('no usage error');
}

describe('command help', () => {
  for (const [argv, own, runOnly] of [
    [['plan', '--help'], '--full', '--continue-interrupted'],
    [['repair', '--help'], '--json', '--continue-interrupted'],
    [['sessions', '--help'], 'export', '--fork-session'],
    [['sessions', 'list', '-h'], 'import', '--prompt'],
    [['store', '--help'], 'migrate', '--resume'],
    [['serve', '--help'], '--root', '--continue-interrupted'],
  ] as const) {
    it(`mend ${argv.join(' ')} shows that command's options only`, async () => {
      const text = await helpText([...argv]);
      expect(text).toContain(`mend ${argv[0]} `);
      expect(text).toContain(own);
      expect(text).not.toContain(runOnly);
      expect(text).toContain('--store');
      expect(optionLines(text).length).toBeLessThan(25);
    });
  }

  it('mend --help points at the commands’ help', async () => {
    expect(await helpText(['--help'])).toContain('mend plan|repair|sessions|store|serve --help');
  });
});

describe('option descriptions and environment', () => {
  it('every option of mend --help has a description', async () => {
    const text = await helpText(['--help']);
    const lines = text.split('\n');
    const bare: string[] = [];
    for (let i = 0; i < lines.length; i++) {
      const m = /^\s+(?:-\w, )?(--[\w-]+)(?:, --[\w-]+)?\s*(.*)$/.exec(lines[i]!);
      if (!m) continue;
      // yargs puts the type on the option's line (no description) or on a line of its own.
      const rest = m[2]!.replace(/\[(?:string|boolean|number|array|choices:[^\]]*|default:[^\]]*)\]/g, '').trim();
      if (rest === '') bare.push(m[1]!);
    }
    expect(bare).toEqual([]);
  });

  it('the environment section names the store variables', async () => {
    const text = (await helpText(['--help'])).replace(/\s+/g, ' ');
    for (const name of ['MEND_HOME', 'MEND_STORE', 'PGHOST', 'PGUSER', 'PGPASSWORD', 'PGDATABASE', 'OPENAI_BASE_URL', 'NO_COLOR']) expect(text).toContain(name);
  });
});

describe('usage errors', () => {
  it('a bare prompt hints at -p and -i', async () => {
    const error = await usageError(['fix the test']);
    expect(error.code).toBe('usage');
    expect(error.message).toContain('-p "fix the test"');
    expect(error.message).toContain('-i "fix the test"');
  });

  it('--tool-env bogus names the flag once', async () => {
    const error = await usageError(['-p', 'x', '--tool-env', 'bogus']);
    expect(error.message.match(/--tool-env/g)).toHaveLength(1);
  });

  it('a command still demands its arguments when help is not asked for', async () => {
    expect((await usageError(['plan'])).code).toBe('usage');
  });
});
