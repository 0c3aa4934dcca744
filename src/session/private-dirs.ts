/**
 * Session logs hold prompts and tool output, so the folders mend creates for
 * them are private (0700) whatever the umask says. Each folder it creates is
 * also fsynced into its parent: a new project's `projects/<key>/chats` must
 * survive a power cut, or the fsynced log inside it is lost with the folder.
 */
import * as fs from 'node:fs';
import { dirname, resolve } from 'node:path';

export type PrivateDirFs = Pick<typeof fs, 'mkdirSync' | 'chmodSync' | 'statSync' | 'openSync' | 'fsyncSync' | 'closeSync'>;

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
  const created: string[] = [];
  for (const folder of missing.reverse()) {
    try {
      io.mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    io.chmodSync(folder, 0o700);
    created.push(folder);
  }
  // A new folder's entry is durable once its parent is fsynced; the deepest one's own
  // entries (the log) are synced by whoever creates them.
  for (const folder of created) syncDirBestEffort(dirname(folder), io);
}

export function ensurePrivateParentDir(file: string, io: PrivateDirFs = fs): void {
  ensurePrivateDir(dirname(resolve(file)), io);
}

/** Best effort: some file systems refuse fsync on a folder. */
export function syncDirBestEffort(dir: string, io: Pick<typeof fs, 'openSync' | 'fsyncSync' | 'closeSync'> = fs): void {
  let fd = -1;
  try {
    fd = io.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    io.fsyncSync(fd);
  } catch {
    // ignored, see above
  } finally {
    if (fd >= 0) io.closeSync(fd);
  }
}

function exists(path: string, io: PrivateDirFs): boolean {
  return io.statSync(path, { throwIfNoEntry: false }) !== undefined;
}
