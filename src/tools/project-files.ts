/**
 * Walks the files under a directory the way `git ls-files --others --cached` would see
 * them: `.gitignore` rules of every directory on the way apply (a deeper file overrides a
 * shallower one, `!negations` included), `.git` is never entered, and an ignored
 * directory is pruned rather than filtered file by file, so a huge `node_modules` costs
 * nothing. Symlinked directories are not followed (no loops, no escapes); symlinked files
 * are yielded and left to the caller's workspace check. Bounded and cancellable.
 */
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { isInside } from './paths.js';
import { readRegularFile } from './safe-read.js';

const MAX_GITIGNORE_BYTES = 1024 * 1024;

export interface WalkEntry {
  /** Absolute path (as walked; symlinks not resolved). */
  path: string;
  /** Relative to the walk's start directory, with `/` separators. */
  rel: string;
  mtimeMs: number;
  size: number;
  /** The entry is a symlink to a file: its target may lie outside the workspace. */
  symlink: boolean;
}

export interface WalkOptions {
  /** Directory to walk (a real path). */
  start: string;
  /** The workspace root containing `start`: .gitignore files from here down to `start` apply too. */
  root: string;
  signal: AbortSignal;
  /** Directory entries examined at most; past it the walk stops and `stats.truncated` is set. */
  maxVisited?: number;
}

export interface WalkStats {
  visited: number;
  truncated: boolean;
}

export const DEFAULT_MAX_VISITED = 200_000;

interface RuleSet {
  dir: string;
  rules: Ignore;
}

/** Yields files in a stable order (code-point order within each directory, depth first). */
export async function* walkProjectFiles(options: WalkOptions, stats: WalkStats = { visited: 0, truncated: false }): AsyncGenerator<WalkEntry> {
  const maxVisited = options.maxVisited ?? DEFAULT_MAX_VISITED;
  const inherited: RuleSet[] = [];
  // Rules of the directories between the workspace root and the start directory.
  if (isInside(options.start, options.root)) {
    const chain: string[] = [];
    for (let dir = dirname(options.start); isInside(dir, options.root); dir = dirname(dir)) {
      chain.unshift(dir);
      if (dir === options.root || dirname(dir) === dir) break;
    }
    for (const dir of chain) {
      const set = await loadRules(dir, options.signal);
      if (set) inherited.push(set);
    }
  }

  const stack: Array<{ dir: string; rules: RuleSet[] }> = [{ dir: options.start, rules: inherited }];
  while (stack.length > 0) {
    const { dir, rules: parentRules } = stack.pop() as { dir: string; rules: RuleSet[] };
    if (options.signal.aborted) return;
    const own = await loadRules(dir, options.signal);
    const rules = own ? [...parentRules, own] : parentRules;
    const dirents = await readdir(dir, { withFileTypes: true }).catch(() => []);
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const dirent of dirents) {
      stats.visited += 1;
      if (stats.visited > maxVisited) {
        stats.truncated = true;
        return;
      }
      const path = join(dir, dirent.name);
      if (dirent.isDirectory()) {
        if (dirent.name === '.git' || isIgnored(rules, path, true)) continue;
        subdirs.push(path);
        continue;
      }
      if (!dirent.isFile() && !dirent.isSymbolicLink()) continue;
      if (isIgnored(rules, path, false)) continue;
      const info = await stat(path).catch(() => undefined);
      // A symlink to a directory is not descended into; a dangling one is no file.
      if (!info?.isFile()) continue;
      yield { path, rel: toPosix(relative(options.start, path)), mtimeMs: info.mtimeMs, size: info.size, symlink: dirent.isSymbolicLink() };
      if (options.signal.aborted) return;
    }
    // Reversed onto the stack so directories are walked in name order.
    for (const sub of subdirs.reverse()) stack.push({ dir: sub, rules });
  }
}

async function loadRules(dir: string, signal: AbortSignal): Promise<RuleSet | undefined> {
  // Through the safe reader: a .gitignore that is a FIFO must not hang the walk.
  const read = await readRegularFile(join(dir, '.gitignore'), { signal, maxBytes: MAX_GITIGNORE_BYTES });
  if (!read.ok) return undefined;
  return { dir, rules: ignore().add(read.bytes.toString('utf8')) };
}

/** The deepest .gitignore with an opinion decides, as in git. */
function isIgnored(rules: readonly RuleSet[], path: string, isDirectory: boolean): boolean {
  for (let i = rules.length - 1; i >= 0; i -= 1) {
    const set = rules[i] as RuleSet;
    const rel = toPosix(relative(set.dir, path));
    if (rel === '' || rel.startsWith('..')) continue;
    const verdict = set.rules.test(isDirectory ? `${rel}/` : rel);
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}

function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}
