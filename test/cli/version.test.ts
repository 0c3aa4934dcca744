import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MEND_VERSION } from '../../src/cli/version.js';
import { EXIT_CODE_TABLE } from '../../src/wire/exit-codes.js';

describe('version and exit codes', () => {
  it('MEND_VERSION is the package version (records carry it as mend/<version>)', () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    expect(MEND_VERSION).toBe(pkg.version);
  });

  it('the README documents every exit code of the table', () => {
    const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
    for (const [code] of EXIT_CODE_TABLE) expect(readme).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });
});
