/**
 * glob, named and shaped like Qwen Code's: `{pattern, path?}`, files only, .gitignore
 * respected, case-insensitive, dotfiles included. Results are sorted as Qwen sorts them:
 * files changed in the last 24 hours first, newest first (what the user is working on),
 * then the rest by path, so the listing is stable.
 */
import picomatch from 'picomatch';
import { z } from 'zod';
import { capText } from './output-cap.js';
import { walkProjectFiles, type WalkEntry, type WalkStats } from './project-files.js';
import { searchScope } from './search-scope.js';
import { ToolErrorType, defineTool, errorOutcome, toolPath } from './tool.js';

/** Paths shown to the model. */
export const MAX_GLOB_RESULTS = 100;
/** Matches collected before sorting; past it the listing says it is incomplete. */
export const MAX_GLOB_COLLECTED = MAX_GLOB_RESULTS * 10;
const RECENT_MS = 24 * 60 * 60 * 1000;

const GlobArgsSchema = z.object({
  pattern: z.string().trim().min(1).describe('The glob pattern to match files against, e.g. "**/*.ts" or "src/**/test_*.py".'),
  path: toolPath.optional().describe('Directory to search in: absolute, or relative to the project root. Omit it to search the whole workspace.'),
});

export const globTool = defineTool({
  name: 'glob',
  kind: 'read',
  description:
    'Finds files whose path matches a glob pattern (e.g. "**/*.js", "src/**/*.ts"), case-insensitively, skipping files ignored by .gitignore. ' +
    `Returns absolute paths, recently modified files first; at most ${MAX_GLOB_RESULTS} are listed.`,
  argsSchema: GlobArgsSchema,
  async run(args, ctx) {
    const scope = await searchScope(args.path, ctx, { allowFile: false });
    if (!scope.ok) return scope.outcome;
    let matches: (path: string) => boolean;
    try {
      matches = picomatch(args.pattern, { dot: true, nocase: true });
    } catch (error) {
      return errorOutcome(`Invalid glob pattern ${JSON.stringify(args.pattern)}: ${(error as Error).message}`, ToolErrorType.invalidParams);
    }

    const found: WalkEntry[] = [];
    const seen = new Set<string>();
    const stats: WalkStats = { visited: 0, truncated: false };
    let hitLimit = false;
    search: for (const start of scope.starts) {
      for await (const entry of walkProjectFiles({ start: start.path, root: start.root, signal: ctx.signal }, stats)) {
        if (!matches(entry.rel) || seen.has(entry.path)) continue;
        if (found.length >= MAX_GLOB_COLLECTED) {
          hitLimit = true;
          break search;
        }
        seen.add(entry.path);
        found.push(entry);
      }
    }
    if (ctx.signal.aborted) return errorOutcome('glob was cancelled.', ToolErrorType.aborted);
    const incomplete = hitLimit || stats.truncated;
    if (found.length === 0) {
      const note = stats.truncated ? ' (the search stopped early: too many files; narrow the path)' : '';
      return { output: `No files found matching pattern "${args.pattern}" ${scope.label}${note}`, isError: false, display: 'No files found' };
    }

    const sorted = sortNewestFirst(found, Date.now());
    const shown = sorted.slice(0, MAX_GLOB_RESULTS);
    const lines = [
      `Found ${incomplete ? 'at least ' : ''}${found.length} file(s) matching "${args.pattern}" ${scope.label}, sorted by modification time (newest first):`,
      '---',
      ...shown.map((entry) => entry.path),
    ];
    if (incomplete) lines.push('---', `[Results truncated after ${found.length} matching files. Narrow the pattern or path.]`);
    else if (sorted.length > shown.length) lines.push('---', `[${sorted.length - shown.length} more file(s) not shown. Narrow the pattern or path.]`);
    return {
      output: capText(lines.join('\n'), ctx.outputCap),
      isError: false,
      display: `Found ${incomplete ? 'at least ' : ''}${found.length} matching file(s)${sorted.length > shown.length || incomplete ? ' (truncated)' : ''}`,
    };
  },
});

/** Recent files newest first, then older files by path (code-point order: the same on every machine). */
export function sortNewestFirst<T extends { path: string; mtimeMs: number }>(entries: readonly T[], now: number): T[] {
  return [...entries].sort((a, b) => {
    const aRecent = now - a.mtimeMs < RECENT_MS;
    const bRecent = now - b.mtimeMs < RECENT_MS;
    if (aRecent && bRecent && a.mtimeMs !== b.mtimeMs) return b.mtimeMs - a.mtimeMs;
    if (aRecent !== bRecent) return aRecent ? -1 : 1;
    return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
  });
}
