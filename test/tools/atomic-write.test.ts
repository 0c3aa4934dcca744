/**
 * writeFileAtomic's options: a new file's mode, and noClobber (an existing file is never
 * replaced: EEXIST, the old bytes kept, no temp file left behind).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/tools/atomic-write.js';

const dir = mkdtempSync(join(tmpdir(), 'mend-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeFileAtomic', () => {
  it('gives a new file the mode asked for', async () => {
    const path = join(dir, 'private.jsonl');
    await writeFileAtomic(path, 'x\n', { mode: 0o600, noClobber: true });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe('x\n');
  });

  it('noClobber refuses an existing file and leaves it as it was', async () => {
    const path = join(dir, 'taken.jsonl');
    writeFileSync(path, 'old\n');
    await expect(writeFileAtomic(path, 'new\n', { noClobber: true })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(path, 'utf8')).toBe('old\n');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('without noClobber replaces the file (the default)', async () => {
    const path = join(dir, 'replaced.jsonl');
    writeFileSync(path, 'old\n');
    await writeFileAtomic(path, 'new\n');
    expect(readFileSync(path, 'utf8')).toBe('new\n');
  });
});
