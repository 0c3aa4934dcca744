/**
 * File writes that a crash cannot tear: content goes to a temporary file in the same
 * directory, is flushed to disk, then renamed over the target. A reader (or a resumed
 * session) sees either the old file or the new one, never half of each.
 *
 * A power cut can also undo the rename (and the folders made for the file) unless the
 * directories holding them are fsynced: a tool reports a file as written only once its
 * name is durable too.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** Permissions of a new file (an existing file keeps its own); default 0o666 less the umask. */
  mode?: number;
  /** Never replace an existing file: fail with EEXIST instead (the temp file is linked in, not renamed over). */
  noClobber?: boolean;
}

export async function writeFileAtomic(path: string, content: string, options: AtomicWriteOptions = {}): Promise<void> {
  // Through a symlink, write the file it points to rather than replacing the link.
  const target = await realpath(path).catch(() => path);
  const dir = dirname(target);
  const firstCreated = await mkdir(dir, { recursive: true });
  // Keep an existing file's permissions; rename would otherwise reset them.
  const mode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
  const temp = join(dir, `.${basename(target)}.mend-${randomUUID().slice(0, 8)}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode ?? options.mode ?? 0o666);
    try {
      await handle.writeFile(content, 'utf8');
      if (mode !== undefined) await handle.chmod(mode);
      else if (options.mode !== undefined) await handle.chmod(options.mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.noClobber) {
      // link(2) refuses an existing name, atomically: the file appears whole or not at all.
      await link(temp, target);
      await rm(temp, { force: true });
    } else {
      await rename(temp, target);
    }
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDir(dir);
  for (const made of createdFolders(firstCreated, dir)) await syncDir(dirname(made));
}

/** The folders `mkdir -p` made: from the first one it reports down to `dir`. */
function createdFolders(firstCreated: string | undefined, dir: string): string[] {
  if (firstCreated === undefined) return [];
  const made: string[] = [];
  for (let current = dir; current.length >= firstCreated.length; current = dirname(current)) {
    made.push(current);
    if (current === firstCreated || dirname(current) === current) break;
  }
  return made;
}

/** Some file systems refuse fsync on a folder (EINVAL); any other failure is the write's. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EBADF') throw error;
  } finally {
    await handle.close();
  }
}
