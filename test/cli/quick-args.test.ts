/**
 * The quick reading of a command line (src/cli/quick-args.ts) against yargs, the parser
 * of record: on every command line it reads, the same command or the same usage error.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseArgs, parseWithYargs } from '../../src/cli/args.js';
import { QUICK_OPTIONS, quickArgs } from '../../src/cli/quick-args.js';

type Outcome = { ok: unknown } | { error: { name: string; code: unknown; message: string } };

async function outcome(parse: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await parse() };
  } catch (error) {
    const e = error as { name: string; code?: unknown; message: string };
    return { error: { name: e.name, code: e.code, message: e.message } };
  }
}

/** Values an option may get: plain words, spaces, '=', '-', '' and flag-like ones, and every choice. */
const value = fc.oneof(
  fc.constantFrom('', '-', 'x y', 'a=b', '--', '-x', '--resume', 'text', 'json', 'stream-json', 'openai', 'scripted', 'bogus', 'jsonl'),
  fc.constantFrom('0b5e7c1a-2d4f-4e6a-9b8c-7d6e5f4a3b2c', '/tmp/s.jsonl', 'postgres://u@h/db', 'rp_0123456789abcdef'),
  fc.string({ maxLength: 6 }),
);

const names = Object.keys(QUICK_OPTIONS);

/** One option as a command line writes it: --name value, --name=value, -s value, a bare boolean. */
const option = fc.tuple(fc.constantFrom(...names), value, fc.constantFrom('space', 'equals', 'short')).map(([name, v, form]) => {
  const spec = QUICK_OPTIONS[name]!;
  if (spec.type === 'boolean') return form === 'short' && spec.short ? [`-${spec.short}`] : [`--${name}`];
  if (form === 'short' && spec.short) return [`-${spec.short}`, v];
  return form === 'equals' ? [`--${name}=${v}`] : [`--${name}`, v];
});

/** Now and then something only yargs reads: an unknown, hidden or list flag, a command, help, a repeat. */
const other = fc.constantFrom(['--max-turns', '3'], ['--bogus'], ['--channel=SDK'], ['plan'], ['--help'], ['--no-debug'], ['-cp', 'x'], ['--debug']);

const commandLine = fc.array(fc.oneof({ weight: 9, arbitrary: option }, { weight: 1, arbitrary: other }), { maxLength: 6 }).map((xs) => xs.flat());

describe('the quick reading of a command line', () => {
  it('gives what yargs gives on generated command lines (the same command, or the same usage error), and reads most of them', async () => {
    let quick = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(commandLine, async (argv) => {
        runs++;
        if (quickArgs(argv) !== null) quick++;
        expect(await outcome(() => parseArgs(argv))).toEqual(await outcome(() => parseWithYargs(argv)));
      }),
      { numRuns: 400 },
    );
    // A property that the quick path never met would hold for nothing.
    expect(quick).toBeGreaterThan(runs / 3);
  });

  it('reads the command lines of a resume and a prompt', () => {
    expect(quickArgs(['--resume', '0b5e7c1a-2d4f-4e6a-9b8c-7d6e5f4a3b2c', '-o', 'stream-json'])).toMatchObject({
      resume: '0b5e7c1a-2d4f-4e6a-9b8c-7d6e5f4a3b2c',
      'output-format': 'stream-json',
      'max-turns': 50,
    });
    expect(quickArgs(['-p', 'hello', '--model=m'])).toMatchObject({ prompt: 'hello', model: 'm', continue: false });
    expect(quickArgs([])).toMatchObject({ _: [], 'output-format': 'text' });
  });

  it('leaves to yargs what yargs reads its own way', () => {
    for (const argv of [
      ['--help'],
      ['-h'],
      ['--version'],
      ['plan', 'x'],
      ['serve'],
      ['--no-debug'],
      ['-cp', 'x'],
      ['--debug', '--debug'],
      ['--max-turns', '3'],
      ['--allowed-tools', 'a'],
      ['--channel=SDK'],
      ['-o', 'yaml'],
      ['--resume', '--debug'],
      ['--debug=true'],
      ['--', '-p'],
    ])
      expect(quickArgs(argv), argv.join(' ')).toBeNull();
  });
});
