/**
 * grep_search, named and shaped like Qwen Code's: `{pattern, glob?, path?, limit?}`, a
 * JavaScript regular expression matched case-insensitively (as Qwen's is) line by line.
 * Output is ripgrep's `path:line:text`, paths relative to the project root when inside
 * it. Files ignored by .gitignore, binary files, special files and files over the size
 * cap are skipped; matches, bytes read and line length are bounded; the search stops when
 * the signal aborts.
 */
import { relative } from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { capText } from './output-cap.js';
import { isInside, projectRootOf, realPathOf } from './paths.js';
import { walkProjectFiles, type WalkEntry, type WalkStats } from './project-files.js';
import { readRegularFile } from './safe-read.js';
import { searchScope } from './search-scope.js';
import { ToolErrorType, defineTool, errorOutcome, toolPath } from './tool.js';

export const MAX_GREP_MATCHES = 500;
export const MAX_GREP_FILE_BYTES = 1024 * 1024;
/** Total bytes read by one search; a search past it stops and says so. */
export const MAX_GREP_TOTAL_BYTES = 64 * 1024 * 1024;
/** Text shown per matching line. */
const MAX_SHOWN_LINE = 500;
/**
 * Only this much of a line is matched: a JavaScript regex cannot be interrupted, so a
 * pathological pattern on a minified megabyte-long line must not stall the turn.
 */
const MAX_SCANNED_LINE = 20_000;
const BINARY_SNIFF_BYTES = 8192;

const GrepArgsSchema = z.object({
  pattern: z.string().min(1).describe('The regular expression (JavaScript syntax) to search for in file contents, e.g. "function\\\\s+\\\\w+".'),
  glob: z.string().min(1).optional().describe('Glob pattern to filter files (e.g. "*.js", "src/**/*.{ts,tsx}").'),
  path: toolPath.optional().describe('File or directory to search in: absolute, or relative to the project root. Defaults to the whole workspace.'),
  limit: z.number().int().positive().optional().describe(`Show at most this many matching lines (default and maximum ${MAX_GREP_MATCHES}).`),
});

interface Skipped {
  large: number;
  binary: number;
  unreadable: number;
}

export const grepSearchTool = defineTool({
  name: 'grep_search',
  kind: 'read',
  description:
    'Searches file contents for a regular expression (JavaScript syntax, case-insensitive), like ripgrep: one `path:line:text` line per match, ' +
    'skipping files ignored by .gitignore and binary files. Filter files with glob (e.g. "*.ts"); narrow with path.',
  argsSchema: GrepArgsSchema,
  async run(args, ctx) {
    let regex: RegExp;
    try {
      regex = new RegExp(args.pattern, 'i');
    } catch (error) {
      return errorOutcome(`Invalid regular expression ${JSON.stringify(args.pattern)}: ${(error as Error).message}`, ToolErrorType.invalidParams);
    }
    // A glob without a slash filters by file name at any depth, as ripgrep's --glob does.
    const fileFilter = args.glob ? picomatch(args.glob, { dot: true, nocase: true, basename: true }) : () => true;
    const scope = await searchScope(args.path, ctx, { allowFile: true });
    if (!scope.ok) return scope.outcome;

    const limit = Math.min(args.limit ?? MAX_GREP_MATCHES, MAX_GREP_MATCHES);
    const projectRoot = scope.roots[0] ?? projectRootOf(ctx);
    const lines: string[] = [];
    const files = new Set<string>();
    const skipped: Skipped = { large: 0, binary: 0, unreadable: 0 };
    const stats: WalkStats = { visited: 0, truncated: false };
    let bytesRead = 0;
    let stoppedBy: 'limit' | 'bytes' | undefined;

    const searchFile = async (entry: Pick<WalkEntry, 'path' | 'size' | 'symlink'>): Promise<void> => {
      if (entry.size > MAX_GREP_FILE_BYTES) return void (skipped.large += 1);
      let path = entry.path;
      if (entry.symlink) {
        // A link inside the project may point anywhere; only targets inside the workspace are read.
        const real = await realPathOf(path).catch(() => undefined);
        if (!real || !scope.roots.some((root) => isInside(real, root))) return void (skipped.unreadable += 1);
        path = real;
      }
      const read = await readRegularFile(path, { signal: ctx.signal, maxBytes: MAX_GREP_FILE_BYTES });
      if (!read.ok) return void (read.reason === 'too_large' ? (skipped.large += 1) : (skipped.unreadable += 1));
      bytesRead += read.bytes.length;
      if (read.bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return void (skipped.binary += 1);
      const shownPath = displayPath(entry.path, projectRoot);
      const text = read.bytes.toString('utf8').split('\n');
      for (const [index, rawLine] of text.entries()) {
        const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
        if (!regex.test(line.length > MAX_SCANNED_LINE ? line.slice(0, MAX_SCANNED_LINE) : line)) continue;
        if (lines.length >= limit) return void (stoppedBy = 'limit');
        files.add(shownPath);
        const shown = line.length > MAX_SHOWN_LINE ? `${line.slice(0, MAX_SHOWN_LINE)}... [line truncated]` : line;
        lines.push(`${shownPath}:${index + 1}:${shown}`);
      }
    };

    search: for (const start of scope.starts) {
      if (start.isFile) {
        await searchFile({ path: start.path, size: 0, symlink: false });
        continue;
      }
      for await (const entry of walkProjectFiles({ start: start.path, root: start.root, signal: ctx.signal }, stats)) {
        if (!fileFilter(entry.rel)) continue;
        await searchFile(entry);
        if (stoppedBy || ctx.signal.aborted) break search;
        if (bytesRead > MAX_GREP_TOTAL_BYTES) {
          stoppedBy = 'bytes';
          break search;
        }
      }
    }
    if (ctx.signal.aborted) return errorOutcome('grep_search was cancelled.', ToolErrorType.aborted);

    const where = `${scope.label}${args.glob ? ` (filter: "${args.glob}")` : ''}`;
    const notes = skippedNotes(skipped, stats, stoppedBy, limit);
    if (lines.length === 0) {
      return { output: [`No matches found for pattern "${args.pattern}" ${where}.`, ...notes].join('\n'), isError: false, display: 'No matches found' };
    }
    const header = `Found ${lines.length}${stoppedBy ? '+' : ''} match(es) in ${files.size} file(s) for pattern "${args.pattern}" ${where}:`;
    return {
      output: capText([header, '---', ...lines, ...(notes.length > 0 ? ['---', ...notes] : [])].join('\n'), ctx.outputCap),
      isError: false,
      display: `Found ${lines.length}${stoppedBy ? '+' : ''} match(es) in ${files.size} file(s)`,
    };
  },
});

function displayPath(path: string, projectRoot: string): string {
  return isInside(path, projectRoot) ? relative(projectRoot, path) || '.' : path;
}

function skippedNotes(skipped: Skipped, stats: WalkStats, stoppedBy: 'limit' | 'bytes' | undefined, limit: number): string[] {
  const notes: string[] = [];
  if (stoppedBy === 'limit') notes.push(`[Stopped after ${limit} matching lines; narrow the pattern, glob or path to see the rest.]`);
  if (stoppedBy === 'bytes') notes.push(`[Stopped after reading ${MAX_GREP_TOTAL_BYTES} bytes; narrow the glob or path.]`);
  if (stats.truncated) notes.push('[Stopped early: too many files in the search path; narrow the path.]');
  if (skipped.large > 0) notes.push(`[${skipped.large} file(s) over ${MAX_GREP_FILE_BYTES} bytes skipped.]`);
  if (skipped.binary > 0) notes.push(`[${skipped.binary} binary file(s) skipped.]`);
  if (skipped.unreadable > 0) notes.push(`[${skipped.unreadable} file(s) skipped: not regular files, unreadable or outside the workspace.]`);
  return notes;
}
