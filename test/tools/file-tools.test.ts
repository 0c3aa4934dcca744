import { mkdir, readFile, stat, chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool } from '../../src/tools/edit-tool.js';
import { listDirectoryTool } from '../../src/tools/list-directory-tool.js';
import { readFileTool } from '../../src/tools/read-file-tool.js';
import { writeFileTool } from '../../src/tools/write-file-tool.js';
import { context, makeTempDir, removeDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

const tenLines = Array.from({ length: 10 }, (_, i) => `line ${i}`).join('\n') + '\n';

describe('read_file', () => {
  it('returns the whole file exactly when it fits', async () => {
    const path = join(dir, 'a.txt');
    await writeFile(path, tenLines);
    const outcome = await readFileTool.execute({ file_path: path }, context(dir));
    expect(outcome).toMatchObject({ isError: false, output: tenLines });
  });

  it('reads a window with a 0-based offset and a line limit', async () => {
    const path = join(dir, 'a.txt');
    await writeFile(path, tenLines);
    const outcome = await readFileTool.execute({ file_path: path, offset: 2, limit: 3 }, context(dir));
    expect(outcome.isError).toBe(false);
    expect(outcome.output).toBe('[Showing lines 3-5 of 10 total lines. To read more, use offset: 5.]\nline 2\nline 3\nline 4');
    const tail = await readFileTool.execute({ file_path: path, offset: 8 }, context(dir));
    expect(tail.output).toBe('[Showing lines 9-10 of 10 total lines.]\nline 8\nline 9\n');
  });

  it('reports an offset past the end, a missing file and a directory as errors', async () => {
    const path = join(dir, 'a.txt');
    await writeFile(path, tenLines);
    expect(await readFileTool.execute({ file_path: path, offset: 10 }, context(dir))).toMatchObject({ isError: true, errorType: 'invalid_tool_params' });
    expect(await readFileTool.execute({ file_path: join(dir, 'nope') }, context(dir))).toMatchObject({ isError: true, errorType: 'file_not_found' });
    expect(await readFileTool.execute({ file_path: dir }, context(dir))).toMatchObject({ isError: true, errorType: 'target_is_directory' });
  });

  it('reads a path relative to the project root', async () => {
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'a.txt'), tenLines);
    // The session's cwd is elsewhere: relative paths follow the project root, not the cwd.
    const outcome = await readFileTool.execute({ file_path: 'sub/a.txt' }, context(join(dir, 'sub'), { projectRoot: dir }));
    expect(outcome).toMatchObject({ isError: false, output: tenLines });
    expect(await readFileTool.execute({ file_path: './sub/../sub/a.txt' }, context(dir))).toMatchObject({ isError: false, output: tenLines });
  });

  it('caps output in bytes and treats null optionals as absent', async () => {
    const path = join(dir, 'big.txt');
    await writeFile(path, `${'x'.repeat(99)}\n`.repeat(50));
    const outcome = await readFileTool.execute({ file_path: path, offset: null, limit: null }, context(dir, { outputCap: 100 }));
    expect(outcome.isError).toBe(false);
    expect(outcome.output).toContain('[output truncated: 4900 bytes omitted]');
  });

  it('does not dump binary files', async () => {
    const path = join(dir, 'bin');
    await writeFile(path, Buffer.from([1, 2, 0, 3]));
    const outcome = await readFileTool.execute({ file_path: path }, context(dir));
    expect(outcome.output).toContain('binary file');
  });
});

describe('write_file', () => {
  it('creates parent directories and then overwrites', async () => {
    const path = join(dir, 'deep', 'er', 'new.txt');
    const created = await writeFileTool.execute({ file_path: path, content: 'one' }, context(dir));
    expect(created).toMatchObject({ isError: false });
    expect(created.output).toContain('created');
    expect(await readFile(path, 'utf8')).toBe('one');
    const overwritten = await writeFileTool.execute({ file_path: path, content: 'two' }, context(dir));
    expect(overwritten.output).toContain('overwrote');
    expect(await readFile(path, 'utf8')).toBe('two');
  });

  it('keeps the mode of a file it replaces and leaves no temp files', async () => {
    const path = join(dir, 'script.sh');
    await writeFile(path, 'old');
    await chmod(path, 0o750);
    await writeFileTool.execute({ file_path: path, content: 'new' }, context(dir));
    expect((await stat(path)).mode & 0o777).toBe(0o750);
    const listing = await listDirectoryTool.execute({ path: dir }, context(dir));
    expect(listing.output).toBe(`Directory listing for ${dir}:\nscript.sh`);
  });

  it('writes relative paths under the project root and rejects directories', async () => {
    expect(await writeFileTool.execute({ file_path: 'x/y.txt', content: 'rel' }, context(dir))).toMatchObject({ isError: false });
    expect(await readFile(join(dir, 'x', 'y.txt'), 'utf8')).toBe('rel');
    expect(await writeFileTool.execute({ file_path: dir, content: '' }, context(dir))).toMatchObject({ isError: true, errorType: 'target_is_directory' });
  });
});

describe('edit', () => {
  it('replaces a unique match and reports one replacement', async () => {
    const path = join(dir, 'f.ts');
    await writeFile(path, 'const a = 1;\nconst b = 2;\n');
    const outcome = await editTool.execute({ file_path: path, old_string: 'b = 2', new_string: 'b = $& + 3' }, context(dir));
    expect(outcome).toMatchObject({ isError: false });
    expect(outcome.output).toContain('(1 replacement)');
    // `$&` stays literal.
    expect(await readFile(path, 'utf8')).toBe('const a = 1;\nconst b = $& + 3;\n');
  });

  it('fails when old_string is missing and leaves the file alone', async () => {
    const path = join(dir, 'f.txt');
    await writeFile(path, 'hello\n');
    const outcome = await editTool.execute({ file_path: path, old_string: 'bye', new_string: 'x' }, context(dir));
    expect(outcome).toMatchObject({ isError: true, errorType: 'edit_no_occurrence_found' });
    expect(await readFile(path, 'utf8')).toBe('hello\n');
  });

  it('fails on an ambiguous match unless replace_all is set', async () => {
    const path = join(dir, 'f.txt');
    await writeFile(path, 'x x x');
    const ambiguous = await editTool.execute({ file_path: path, old_string: 'x', new_string: 'y' }, context(dir));
    expect(ambiguous).toMatchObject({ isError: true, errorType: 'edit_expected_occurrence_mismatch' });
    expect(ambiguous.output).toContain('matches 3 times');
    expect(await readFile(path, 'utf8')).toBe('x x x');
    const all = await editTool.execute({ file_path: path, old_string: 'x', new_string: 'y', replace_all: true }, context(dir));
    expect(all).toMatchObject({ isError: false });
    expect(all.output).toContain('(3 replacements)');
    expect(await readFile(path, 'utf8')).toBe('y y y');
  });

  it('creates a file from an empty old_string, but never over an existing one', async () => {
    const path = join(dir, 'sub', 'new.txt');
    expect(await editTool.execute({ file_path: path, old_string: '', new_string: 'fresh' }, context(dir))).toMatchObject({ isError: false });
    expect(await readFile(path, 'utf8')).toBe('fresh');
    expect(await editTool.execute({ file_path: path, old_string: '', new_string: 'again' }, context(dir))).toMatchObject({
      isError: true,
      errorType: 'attempt_to_create_existing_file',
    });
  });

  it('reports missing files and no-op edits, and edits relative paths', async () => {
    const path = join(dir, 'f.txt');
    expect(await editTool.execute({ file_path: path, old_string: 'a', new_string: 'b' }, context(dir))).toMatchObject({ errorType: 'file_not_found' });
    await writeFile(path, 'a');
    expect(await editTool.execute({ file_path: path, old_string: 'a', new_string: 'a' }, context(dir))).toMatchObject({ errorType: 'edit_no_change' });
    expect(await editTool.execute({ file_path: 'f.txt', old_string: 'a', new_string: 'b' }, context(dir))).toMatchObject({ isError: false });
    expect(await readFile(path, 'utf8')).toBe('b');
  });
});

describe('list_directory', () => {
  beforeEach(async () => {
    await mkdir(join(dir, 'src'));
    await mkdir(join(dir, 'node_modules'));
    await mkdir(join(dir, 'build.log'));
    await writeFile(join(dir, 'b.txt'), '');
    await writeFile(join(dir, 'a.log'), '');
    await writeFile(join(dir, 'README.md'), '');
  });

  it('lists directories first with a trailing slash', async () => {
    const outcome = await listDirectoryTool.execute({ path: dir }, context(dir));
    expect(outcome.output).toBe(`Directory listing for ${dir}:\nbuild.log/\nnode_modules/\nsrc/\nREADME.md\na.log\nb.txt`);
  });

  it('leaves out entries matching ignore patterns', async () => {
    const outcome = await listDirectoryTool.execute({ path: dir, ignore: ['*.log', 'node_modules/', 'READ?E.*'] }, context(dir));
    expect(outcome.output).toBe(`Directory listing for ${dir}:\nsrc/\nb.txt\n(4 ignored)`);
    // A trailing slash matches directories only.
    const dirsOnly = await listDirectoryTool.execute({ path: dir, ignore: ['*.log/'] }, context(dir));
    expect(dirsOnly.output).toContain('a.log');
    expect(dirsOnly.output).not.toContain('build.log');
  });

  it('reports empty, missing and non-directory paths, and lists relative ones', async () => {
    expect((await listDirectoryTool.execute({ path: join(dir, 'src') }, context(dir))).output).toBe(`Directory ${join(dir, 'src')} is empty.`);
    expect(await listDirectoryTool.execute({ path: join(dir, 'nope') }, context(dir))).toMatchObject({ isError: true, errorType: 'file_not_found' });
    expect(await listDirectoryTool.execute({ path: join(dir, 'b.txt') }, context(dir))).toMatchObject({ isError: true, errorType: 'path_is_not_a_directory' });
    expect((await listDirectoryTool.execute({ path: '.' }, context(dir))).output).toBe(
      `Directory listing for ${dir}:\nbuild.log/\nnode_modules/\nsrc/\nREADME.md\na.log\nb.txt`,
    );
  });
});
