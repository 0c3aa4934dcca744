/**
 * Where a file tool may act. Paths are absolute or relative to the project root, and
 * after symlinks are resolved they must lie inside the project root or a directory added
 * with --add-dir. The check lives in the tools, not the approval gate, so it holds in
 * every approval mode, yolo included (as Qwen Code's workspace check does).
 *
 * Tools act on the resolved real path, never on the name they were given, so a symlink
 * inside the project cannot lead a read or a write outside it. (A symlink swapped in
 * between the check and the use is not covered; the shell tool can do far more anyway.)
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { ToolErrorType, errorOutcome, type ToolContext, type ToolOutcome } from './tool.js';

export type ResolvedPath = { ok: true; path: string } | { ok: false; outcome: ToolOutcome };

/** The project root: relative paths resolve against it. */
export function projectRootOf(ctx: Pick<ToolContext, 'cwd' | 'projectRoot'>): string {
  return resolve(ctx.projectRoot ?? ctx.cwd);
}

/** The project root first, then the added directories, as given (not yet resolved). */
export function workspaceRoots(ctx: Pick<ToolContext, 'cwd' | 'projectRoot' | 'roots'>): string[] {
  const root = projectRootOf(ctx);
  return [root, ...(ctx.roots ?? []).map((dir) => resolve(root, dir))];
}

/** Absolute form of a tool's path argument, without touching the file system. */
export function absoluteToolPath(input: string, ctx: Pick<ToolContext, 'cwd' | 'projectRoot'>): string {
  return isAbsolute(input) ? resolve(input) : resolve(projectRootOf(ctx), input);
}

/**
 * The real path: symlinks resolved; for a path that does not exist yet, the real path of
 * its nearest existing ancestor with the missing part appended.
 */
export async function realPathOf(path: string): Promise<string> {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = dirname(current);
      // ENOENT/ENOTDIR: keep climbing; anything else (ELOOP, EACCES) cannot be resolved safely.
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === current) throw error;
      missing.push(basename(current));
      current = parent;
    }
  }
}

export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Real paths of the workspace roots; a root that does not exist stays as given (it contains nothing real). */
export async function realWorkspaceRoots(ctx: Pick<ToolContext, 'cwd' | 'projectRoot' | 'roots'>): Promise<string[]> {
  return Promise.all(workspaceRoots(ctx).map((root) => realPathOf(root).catch(() => root)));
}

/** Resolves a path argument and checks it against the workspace; the error outcome names the roots. */
export async function resolveToolPath(input: string, ctx: ToolContext): Promise<ResolvedPath> {
  const absolute = absoluteToolPath(input, ctx);
  let real: string;
  try {
    real = await realPathOf(absolute);
  } catch (error) {
    return { ok: false, outcome: errorOutcome(`Cannot resolve path ${absolute}: ${(error as Error).message}`, ToolErrorType.invalidParams) };
  }
  const roots = await realWorkspaceRoots(ctx);
  if (roots.some((root) => isInside(real, root))) return { ok: true, path: real };
  return { ok: false, outcome: outsideWorkspace(absolute, real, roots) };
}

export function outsideWorkspace(absolute: string, real: string, roots: readonly string[]): ToolOutcome {
  const via = real === absolute ? '' : ` (resolves to ${real})`;
  const [root, ...extra] = roots;
  const added = extra.length > 0 ? ` or the added directories ${extra.join(', ')}` : '';
  return errorOutcome(
    `Path is outside the workspace: ${absolute}${via}. File tools only work inside the project root ${root}${added}. ` +
      'Use a path inside them (directories can be added with --add-dir).',
    ToolErrorType.pathNotInWorkspace,
  );
}
