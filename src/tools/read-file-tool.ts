/** read_file, named and shaped like Qwen Code's: 0-based line offset and a line count. */
import { z } from 'zod';
import { capText } from './output-cap.js';
import { resolveToolPath } from './paths.js';
import { readRegularFile } from './safe-read.js';
import { ToolErrorType, defineTool, errorOutcome, toolPath } from './tool.js';

export const DEFAULT_READ_LIMIT = 2000;
const MAX_LINE_LENGTH = 2000;
const MAX_FILE_BYTES = 20 * 1024 * 1024;
const BINARY_SNIFF_BYTES = 8192;

const ReadFileArgsSchema = z.object({
  file_path: toolPath.describe('Path of the file to read: absolute, or relative to the project root.'),
  offset: z.number().int().nonnegative().optional().describe('0-based line number to start reading from.'),
  limit: z.number().int().positive().optional().describe(`Maximum number of lines to read (default ${DEFAULT_READ_LIMIT}).`),
});

export const readFileTool = defineTool({
  name: 'read_file',
  kind: 'read',
  description:
    'Reads a text file. For large files use offset (0-based line) and limit (line count) to read it in parts; ' +
    'a note at the top says when only part of the file is shown.',
  argsSchema: ReadFileArgsSchema,
  async run(args, ctx) {
    const resolved = await resolveToolPath(args.file_path, ctx);
    if (!resolved.ok) return resolved.outcome;
    const path = resolved.path;
    const read = await readRegularFile(path, { signal: ctx.signal, maxBytes: MAX_FILE_BYTES });
    if (!read.ok) return read.outcome;
    const bytes = read.bytes;
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
      return { output: `Cannot display content of binary file: ${path} (${bytes.length} bytes)`, isError: false };
    }

    const text = bytes.toString('utf8');
    const lines = text.split('\n');
    // A final newline ends the last line; it does not start another one.
    if (text.endsWith('\n')) lines.pop();
    const total = lines.length;
    const offset = args.offset ?? 0;
    if (offset > 0 && offset >= total) {
      return errorOutcome(`offset ${offset} is past the end of ${path} (${total} lines)`, ToolErrorType.invalidParams);
    }
    const end = Math.min(total, offset + (args.limit ?? DEFAULT_READ_LIMIT));
    let clippedLines = 0;
    const selected = lines.slice(offset, end).map((line) => {
      if (line.length <= MAX_LINE_LENGTH) return line;
      clippedLines += 1;
      return `${line.slice(0, MAX_LINE_LENGTH)}... [line truncated]`;
    });
    // Keep the file's own final newline when the read reaches the end, so content round-trips exactly.
    let content = selected.join('\n');
    if (end === total && text.endsWith('\n') && selected.length > 0) content += '\n';

    const partial = offset > 0 || end < total || clippedLines > 0;
    const notes: string[] = [];
    if (offset > 0 || end < total) {
      notes.push(`[Showing lines ${total === 0 ? 0 : offset + 1}-${end} of ${total} total lines.${end < total ? ` To read more, use offset: ${end}.` : ''}]`);
    }
    if (clippedLines > 0) notes.push(`[${clippedLines} line(s) longer than ${MAX_LINE_LENGTH} characters were truncated.]`);
    const output = capText(partial ? `${notes.join('\n')}\n${content}` : content, ctx.outputCap);
    return { output, isError: false, display: partial ? `Read lines ${offset + 1}-${end} of ${total}` : `Read ${total} lines` };
  },
});
