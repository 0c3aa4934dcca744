/**
 * Session logs hold prompts and tool output, so the folders mend creates for
 * them are private (0700) whatever the umask says.
 */
import * as fs from 'node:fs';
import { dirname, resolve } from 'node:path';

export type PrivateDirFs = Pick<typeof fs, 'mkdirSync' | 'chmodSync' | 'statSync'>;

/**
 * Creates `dir` and any missing ancestors with mode 0700. One level at a time,
 * each chmod-ed right after its mkdir: a umask that strips owner bits would
 * otherwise leave a parent we cannot create the next level in. Existing
 * folders (also ones a concurrent process just made) keep their mode: they are
 * not ours to change.
 */
export function ensurePrivateDir(dir: string, io: PrivateDirFs = fs): void {
  const missing: string[] = [];
  let current = resolve(dir);
  while (!exists(current, io)) {
    missing.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const folder of missing.reverse()) {
    try {
      io.mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    io.chmodSync(folder, 0o700);
  }
}

export function ensurePrivateParentDir(file: string, io: PrivateDirFs = fs): void {
  ensurePrivateDir(dirname(resolve(file)), io);
}

function exists(path: string, io: PrivateDirFs): boolean {
  return io.statSync(path, { throwIfNoEntry: false }) !== undefined;
}
