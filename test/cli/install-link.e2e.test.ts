/**
 * The README's way to get `mend` on PATH from a clone (`npm link`, `npm install -g .`),
 * done into a private npm prefix: the command it makes runs this clone's CLI.
 */
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { MEND_VERSION } from '../../src/cli/version.js';
import { REPO_ROOT, cleanupSandboxes, trackTempDir } from '../support/cli.js';

afterAll(cleanupSandboxes);

describe('mend on PATH from a clone', { timeout: 120_000 }, () => {
  it('the README says how', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('`npm link` (or `npm install -g .`)');
  });

  for (const args of [['link'], ['install', '-g', '.']]) {
    it(`npm ${args.join(' ')} makes a mend command that runs this clone`, async () => {
      const prefix = trackTempDir(realpathSync(mkdtempSync(join(tmpdir(), 'mend-prefix-'))));
      const env = { ...process.env, NPM_CONFIG_PREFIX: prefix, NPM_CONFIG_AUDIT: 'false', NPM_CONFIG_FUND: 'false' };
      // --ignore-scripts: the clone is built already (npm install ran `prepare`).
      const install = await execa('npm', [...args, '--ignore-scripts'], { cwd: REPO_ROOT, env, reject: false });
      expect(install.exitCode, install.stderr).toBe(0);
      const bin = join(prefix, 'bin');
      const run = await execa('mend', ['--version'], { cwd: tmpdir(), env: { ...env, PATH: `${bin}:${process.env['PATH'] ?? ''}` }, reject: false });
      expect(run.exitCode).toBe(0);
      expect(run.stdout.trim()).toBe(MEND_VERSION);
      expect(realpathSync(join(prefix, 'lib/node_modules/mend'))).toBe(realpathSync(REPO_ROOT));
    });
  }
});
