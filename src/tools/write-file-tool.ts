/** write_file, named and shaped like Qwen Code's. Parent directories are created as needed. */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-write.js';
import { resolveToolPath } from './paths.js';
import { ToolErrorType, defineTool, errorOutcome, toolPath } from './tool.js';

const WriteFileArgsSchema = z.object({
  file_path: toolPath.describe('Path of the file to write: absolute, or relative to the project root.'),
  content: z.string().describe('The full content to write to the file.'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  kind: 'edit',
  description: 'Writes content to a file, replacing it if it exists and creating it and its parent directories if not.',
  argsSchema: WriteFileArgsSchema,
  async run(args, ctx) {
    const resolved = await resolveToolPath(args.file_path, ctx);
    if (!resolved.ok) return resolved.outcome;
    const path = resolved.path;
    const existing = await stat(path).catch(() => undefined);
    if (existing?.isDirectory()) return errorOutcome(`Path is a directory, not a file: ${path}`, ToolErrorType.targetIsDirectory);
    // Replacing a FIFO or a device node with a regular file is never what the model meant.
    if (existing && !existing.isFile()) return errorOutcome(`Not a regular file: ${path}; refusing to replace it.`, ToolErrorType.notRegularFile);
    try {
      await writeFileAtomic(path, args.content);
    } catch (error) {
      return errorOutcome(`Failed to write ${path}: ${(error as Error).message}`, ToolErrorType.writeFailure);
    }
    const bytes = Buffer.byteLength(args.content);
    const output = existing ? `Successfully overwrote file: ${path}` : `Successfully created and wrote to new file: ${path}`;
    return { output, isError: false, display: `${existing ? 'Overwrote' : 'Created'} ${path} (${bytes} bytes)` };
  },
});
