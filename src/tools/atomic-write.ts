/**
 * File writes that a crash cannot tear: content goes to a temporary file in the same
 * directory, is flushed to disk, then renamed over the target. A reader (or a resumed
 * session) sees either the old file or the new one, never half of each.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export async function writeFileAtomic(path: string, content: string): Promise<void> {
  // Through a symlink, write the file it points to rather than replacing the link.
  const target = await realpath(path).catch(() => path);
  const dir = dirname(target);
  await mkdir(dir, { recursive: true });
  // Keep an existing file's permissions; rename would otherwise reset them.
  const mode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
  const temp = join(dir, `.${basename(target)}.mend-${randomUUID().slice(0, 8)}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode ?? 0o666);
    try {
      await handle.writeFile(content, 'utf8');
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
