/**
 * edit, named and shaped like Qwen Code's: exact-text replacement. An ambiguous match is
 * refused rather than guessed, because editing the wrong occurrence is worse than asking
 * the model for more context.
 */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-write.js';
import { resolveToolPath } from './paths.js';
import { readRegularFile } from './safe-read.js';
import { ToolErrorType, defineTool, errorOutcome, toolPath, type ToolOutcome } from './tool.js';

const EditArgsSchema = z.object({
  file_path: toolPath.describe('Path of the file to modify: absolute, or relative to the project root.'),
  old_string: z.string().describe('The exact text to replace, including whitespace and indentation. Empty to create a new file.'),
  new_string: z.string().describe('The text to replace old_string with.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old_string (default false).'),
});

/** Non-overlapping occurrences, counted the same way split/join replaces them. */
export function countOccurrences(text: string, search: string): number {
  if (search === '') return 0;
  let count = 0;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count += 1;
  return count;
}

export const editTool = defineTool({
  name: 'edit',
  kind: 'edit',
  description:
    'Replaces exact text in a file. old_string must match exactly once unless replace_all is true. ' +
    'With an empty old_string, creates a new file containing new_string.',
  argsSchema: EditArgsSchema,
  async run(args, ctx) {
    const resolved = await resolveToolPath(args.file_path, ctx);
    if (!resolved.ok) return resolved.outcome;
    const path = resolved.path;
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory()) return errorOutcome(`Path is a directory, not a file: ${path}`, ToolErrorType.targetIsDirectory);

    if (args.old_string === '') {
      if (info) {
        return errorOutcome(`File already exists, cannot create it with an empty old_string: ${path}`, ToolErrorType.createExistingFile);
      }
      const failed = await write(path, args.new_string);
      if (failed) return failed;
      return { output: `Created new file: ${path}`, isError: false, display: `Created ${path}` };
    }
    if (!info) return errorOutcome(`File not found: ${path}`, ToolErrorType.fileNotFound);

    const read = await readRegularFile(path, { signal: ctx.signal });
    if (!read.ok) return read.outcome;
    const content = read.bytes.toString('utf8');
    const count = countOccurrences(content, args.old_string);
    if (count === 0) {
      return errorOutcome(
        `old_string was not found in ${path}. Read the file again and use its exact text, including whitespace and indentation.`,
        ToolErrorType.editNoOccurrence,
      );
    }
    if (count > 1 && !args.replace_all) {
      return errorOutcome(
        `old_string matches ${count} times in ${path}. Include more surrounding context to make it unique, or set replace_all: true.`,
        ToolErrorType.editOccurrenceMismatch,
      );
    }
    if (args.old_string === args.new_string) {
      return errorOutcome(`old_string and new_string are identical; ${path} was not changed.`, ToolErrorType.editNoChange);
    }
    // split/join, not String.replace: `$&` and friends in new_string must stay literal.
    const updated = args.replace_all ? content.split(args.old_string).join(args.new_string) : replaceFirst(content, args.old_string, args.new_string);
    const failed = await write(path, updated);
    if (failed) return failed;
    const replacements = args.replace_all ? count : 1;
    const noun = replacements === 1 ? 'replacement' : 'replacements';
    return { output: `Successfully modified ${path} (${replacements} ${noun}).`, isError: false, display: `${replacements} ${noun} in ${path}` };
  },
});

async function write(path: string, content: string): Promise<ToolOutcome | undefined> {
  try {
    await writeFileAtomic(path, content);
    return undefined;
  } catch (error) {
    return errorOutcome(`Failed to write ${path}: ${(error as Error).message}`, ToolErrorType.writeFailure);
  }
}

function replaceFirst(text: string, search: string, replacement: string): string {
  const at = text.indexOf(search);
  return `${text.slice(0, at)}${replacement}${text.slice(at + search.length)}`;
}
