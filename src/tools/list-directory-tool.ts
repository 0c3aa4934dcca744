/** list_directory, named and shaped like Qwen Code's. Directories first, each suffixed with '/'. */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { capText } from './output-cap.js';
import { resolveToolPath } from './paths.js';
import { ToolErrorType, defineTool, errorOutcome, toolPath } from './tool.js';

const ListDirectoryArgsSchema = z.object({
  path: toolPath.describe('Path of the directory to list: absolute, or relative to the project root.'),
  ignore: z.array(z.string()).optional().describe('Glob patterns of entry names to leave out (`*` and `?`; a trailing `/` matches directories only).'),
});

/** A small glob: `*` is any run of characters, `?` one character, matched against an entry name. */
export function compileIgnore(patterns: readonly string[]): (name: string, isDirectory: boolean) => boolean {
  const rules = patterns
    .filter((pattern) => pattern.length > 0)
    .map((pattern) => {
      const dirOnly = pattern.endsWith('/');
      const body = dirOnly ? pattern.slice(0, -1) : pattern;
      const source = body
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.');
      return { dirOnly, regex: new RegExp(`^${source}$`) };
    });
  return (name, isDirectory) => rules.some((rule) => (!rule.dirOnly || isDirectory) && rule.regex.test(name));
}

export const listDirectoryTool = defineTool({
  name: 'list_directory',
  kind: 'read',
  description: 'Lists the files and subdirectories directly inside a directory. Directories are listed first and end with "/".',
  argsSchema: ListDirectoryArgsSchema,
  async run(args, ctx) {
    const resolved = await resolveToolPath(args.path, ctx);
    if (!resolved.ok) return resolved.outcome;
    const path = resolved.path;
    const info = await stat(path).catch(() => undefined);
    if (!info) return errorOutcome(`Directory not found: ${path}`, ToolErrorType.fileNotFound);
    if (!info.isDirectory()) return errorOutcome(`Path is not a directory: ${path}`, ToolErrorType.pathIsNotDirectory);

    const ignored = compileIgnore(args.ignore ?? []);
    const dirents = await readdir(path, { withFileTypes: true });
    const entries: Array<{ name: string; isDirectory: boolean }> = [];
    let ignoredCount = 0;
    for (const dirent of dirents) {
      // A symlink to a directory is listed as a directory: that is how it will behave when used.
      const isDirectory = dirent.isDirectory() || (dirent.isSymbolicLink() && (await isDirectoryPath(join(path, dirent.name))));
      if (ignored(dirent.name, isDirectory)) ignoredCount += 1;
      else entries.push({ name: dirent.name, isDirectory });
    }
    entries.sort((a, b) => (a.isDirectory === b.isDirectory ? compare(a.name, b.name) : a.isDirectory ? -1 : 1));

    const note = ignoredCount > 0 ? `\n(${ignoredCount} ignored)` : '';
    if (entries.length === 0) return { output: `Directory ${path} is empty.${note}`, isError: false };
    const listing = entries.map((entry) => (entry.isDirectory ? `${entry.name}/` : entry.name)).join('\n');
    return {
      output: capText(`Directory listing for ${path}:\n${listing}${note}`, ctx.outputCap),
      isError: false,
      display: `Listed ${entries.length} item(s)${ignoredCount > 0 ? `, ${ignoredCount} ignored` : ''}`,
    };
  },
});

async function isDirectoryPath(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

// Code-point order, not locale order: the same listing on every machine.
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
