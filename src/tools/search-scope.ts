/**
 * Where glob and grep_search look: the given path (checked like any file tool's path), or
 * every workspace root when none is given. Each start carries the workspace root it lies
 * in, whose .gitignore files apply on the way down.
 */
import { stat } from 'node:fs/promises';
import { isInside, realWorkspaceRoots, resolveToolPath } from './paths.js';
import { ToolErrorType, errorOutcome, type ToolContext, type ToolOutcome } from './tool.js';

export interface SearchStart {
  /** Real path of a directory or (for grep) a file. */
  path: string;
  isFile: boolean;
  /** The workspace root containing it. */
  root: string;
}

export type SearchScope = { ok: true; starts: SearchStart[]; roots: string[]; label: string } | { ok: false; outcome: ToolOutcome };

export async function searchScope(path: string | undefined, ctx: ToolContext, options: { allowFile: boolean }): Promise<SearchScope> {
  const roots = await realWorkspaceRoots(ctx);
  if (path === undefined) {
    const starts: SearchStart[] = [];
    for (const root of roots) {
      // An added directory inside the project root would be walked twice.
      if (starts.some((start) => isInside(root, start.path))) continue;
      if (await isDirectory(root)) starts.push({ path: root, isFile: false, root });
    }
    return { ok: true, starts, roots, label: roots.length > 1 ? `across ${roots.length} workspace directories` : 'in the workspace directory' };
  }
  const resolved = await resolveToolPath(path, ctx);
  if (!resolved.ok) return resolved;
  const info = await stat(resolved.path).catch(() => undefined);
  if (!info) return { ok: false, outcome: errorOutcome(`Path not found: ${resolved.path}`, ToolErrorType.fileNotFound) };
  const isFile = info.isFile();
  if (!info.isDirectory() && !(options.allowFile && isFile)) {
    return { ok: false, outcome: errorOutcome(`Path is not a directory: ${resolved.path}`, ToolErrorType.pathIsNotDirectory) };
  }
  const root = roots.find((candidate) => isInside(resolved.path, candidate)) ?? resolved.path;
  return { ok: true, starts: [{ path: resolved.path, isFile, root }], roots, label: `within ${resolved.path}` };
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}
