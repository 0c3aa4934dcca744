/**
 * The README's promise, `npm run demo`: a real crash, its recovery line and the continuation,
 * with the narration as plain text when it goes into a pipe (or NO_COLOR is set).
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

describe('npm run demo', () => {
  it('crashes, shows the recovery plan and continues without re-running the command; no escape codes into a pipe', { timeout: 180_000 }, async () => {
    const r = await promisify(execFile)(process.execPath, [join(root, 'dist', 'scripts', 'demo.js')], {
      env: { ...process.env, NO_COLOR: '' },
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(r.stdout).toMatch(/"subtype":"recovery".*"kind":"interrupted_turn"/);
    expect(r.stderr).toContain('== ');
    // Into a pipe: no escape of any kind on either stream (the narration is bold only on a terminal).
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stderr).not.toContain('\x1b');
  });
});
