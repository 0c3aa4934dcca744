/**
 * Session logs hold prompts and tool output, so the folders mend creates for
 * them are private (0700) whatever the umask says.
 */
import * as fs from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';

export type PrivateDirFs = Pick<typeof fs, 'mkdirSync' | 'chmodSync'>;

/**
 * Creates `dir` and any missing ancestors with mode 0700. Only folders created
 * here are chmod-ed: an existing folder belongs to someone who chose its mode.
 */
export function ensurePrivateDir(dir: string, io: PrivateDirFs = fs): void {
  const target = resolve(dir);
  const firstCreated = io.mkdirSync(target, { recursive: true, mode: 0o700 });
  if (firstCreated === undefined) return;
  // mkdir's mode is filtered by the umask; chmod is not. Walk from the first
  // created folder down to the target.
  let current = resolve(firstCreated);
  io.chmodSync(current, 0o700);
  const rest = relative(current, target);
  if (rest === '') return;
  for (const segment of rest.split(sep)) {
    current = resolve(current, segment);
    io.chmodSync(current, 0o700);
  }
}

export function ensurePrivateParentDir(file: string, io: PrivateDirFs = fs): void {
  ensurePrivateDir(dirname(resolve(file)), io);
}
