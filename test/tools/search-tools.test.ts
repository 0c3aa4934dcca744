import { execFileSync } from 'node:child_process';
import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_GLOB_RESULTS, globTool, sortNewestFirst } from '../../src/tools/glob-tool.js';
import { grepSearchTool } from '../../src/tools/grep-tool.js';
import { context, makeTempDir, removeDir } from './helpers.js';

let base: string;
let dir: string;
beforeEach(async () => {
  base = await makeTempDir();
  dir = join(base, 'project');
  await mkdir(dir);
});
afterEach(async () => {
  await removeDir(base);
});

async function put(rel: string, content: string, ageDays = 0): Promise<void> {
  const path = join(dir, rel);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  if (ageDays > 0) {
    const when = new Date(Date.now() - ageDays * 86_400_000);
    await utimes(path, when, when);
  }
}

async function project(): Promise<void> {
  await put('.gitignore', 'dist/\n*.log\n!keep.log\n');
  await put('src/a.ts', 'export const alpha = 1;\n// TODO: beta\n', 3);
  await put('src/b.ts', 'export function Beta() {}\n', 2);
  await put('src/nested/c.tsx', 'const x = "beta";\r\n');
  await put('src/nested/.gitignore', 'generated.ts\n');
  await put('src/nested/generated.ts', 'beta generated\n');
  await put('dist/out.ts', 'beta in dist\n');
  await put('debug.log', 'beta log\n');
  await put('keep.log', 'beta kept\n');
  await put('.hidden.ts', 'beta hidden\n');
  await put('node.bin', '');
  await writeFile(join(dir, 'image.bin'), Buffer.from([0x62, 0x65, 0x74, 0x61, 0, 1, 2]));
  await put('.git/config', 'beta git internals\n');
}

describe('glob', () => {
  beforeEach(project);

  it('matches patterns case-insensitively, respects .gitignore at every level, recent files first', async () => {
    const outcome = await globTool.execute({ pattern: '**/*.TS' }, context(dir));
    expect(outcome.isError).toBe(false);
    const paths = outcome.output.split('\n').filter((line) => line.startsWith('/'));
    // .hidden.ts is new (recent, first); then the older files by path.
    expect(paths).toEqual([join(dir, '.hidden.ts'), join(dir, 'src/a.ts'), join(dir, 'src/b.ts')]);
    expect(outcome.output).toContain('Found 3 file(s) matching "**/*.TS" in the workspace directory, sorted by modification time (newest first):');
    const logs = await globTool.execute({ pattern: '*.log' }, context(dir));
    expect(logs.output).toContain(join(dir, 'keep.log'));
    expect(logs.output).not.toContain('debug.log');
  });

  it('searches a relative path and reports no match plainly', async () => {
    const outcome = await globTool.execute({ pattern: '**/*.tsx', path: 'src' }, context(dir));
    expect(outcome.output).toContain(join(dir, 'src/nested/c.tsx'));
    expect(outcome.output).toContain(`within ${join(dir, 'src')}`);
    expect((await globTool.execute({ pattern: '*.rs' }, context(dir))).output).toBe('No files found matching pattern "*.rs" in the workspace directory');
  });

  it('applies the .gitignore files above a search path too', async () => {
    await put('src/trace.log', 'beta');
    await put('src/keep.log', 'beta');
    const outcome = await globTool.execute({ pattern: '**/*', path: 'src' }, context(dir));
    expect(outcome.output).not.toContain('trace.log');
    expect(outcome.output).not.toContain('generated.ts');
    expect(outcome.output).toContain(join(dir, 'src/keep.log'));
    const grep = await grepSearchTool.execute({ pattern: 'beta', path: 'src/nested' }, context(dir));
    expect(grep.output).toContain('src/nested/c.tsx:1:');
    expect(grep.output).not.toContain('generated');
  });

  it('is confined like the file tools and bounded in results', async () => {
    expect(await globTool.execute({ pattern: '*', path: '/etc' }, context(dir))).toMatchObject({ isError: true, errorType: 'path_not_in_workspace' });
    for (let i = 0; i < MAX_GLOB_RESULTS + 5; i += 1) await put(`many/f${String(i).padStart(3, '0')}.txt`, '');
    const outcome = await globTool.execute({ pattern: 'many/*.txt' }, context(dir));
    expect(outcome.output.split('\n').filter((line) => line.startsWith('/'))).toHaveLength(MAX_GLOB_RESULTS);
    expect(outcome.output).toContain('[5 more file(s) not shown.');
  });

  it('sorts recent files newest first, older ones by path', () => {
    const now = 10 * 86_400_000;
    const sorted = sortNewestFirst(
      [
        { path: '/b', mtimeMs: 0 },
        { path: '/a', mtimeMs: 1 },
        { path: '/old-but-recent', mtimeMs: now - 1000 },
        { path: '/newest', mtimeMs: now - 10 },
      ],
      now,
    );
    expect(sorted.map((e) => e.path)).toEqual(['/newest', '/old-but-recent', '/a', '/b']);
  });
});

describe('grep_search', () => {
  beforeEach(project);

  it('prints ripgrep-style path:line:text, case-insensitive, skipping ignored, binary and .git files', async () => {
    const outcome = await grepSearchTool.execute({ pattern: 'b[e]ta' }, context(dir));
    expect(outcome.isError).toBe(false);
    const matches = outcome.output.split('\n').filter((line) => /^[^[\s].*:\d+:/.test(line));
    expect(matches).toEqual([
      '.hidden.ts:1:beta hidden',
      'keep.log:1:beta kept',
      'src/a.ts:2:// TODO: beta',
      'src/b.ts:1:export function Beta() {}',
      'src/nested/c.tsx:1:const x = "beta";',
    ]);
    expect(outcome.output).toContain('[1 binary file(s) skipped.]');
  });

  it('filters by glob at any depth, searches a single file, and honours limit', async () => {
    const tsx = await grepSearchTool.execute({ pattern: 'beta', glob: '*.tsx' }, context(dir));
    expect(tsx.output).toContain('src/nested/c.tsx:1:');
    expect(tsx.output).not.toContain('src/a.ts');
    const one = await grepSearchTool.execute({ pattern: 'alpha', path: 'src/a.ts' }, context(dir));
    expect(one.output).toContain('src/a.ts:1:export const alpha = 1;');
    const limited = await grepSearchTool.execute({ pattern: 'beta', limit: 2 }, context(dir));
    expect(limited.output).toContain('Found 2+ match(es)');
    expect(limited.output).toContain('[Stopped after 2 matching lines');
  });

  it('reports invalid regular expressions and paths outside the workspace as errors', async () => {
    const bad = await grepSearchTool.execute({ pattern: '(unclosed' }, context(dir));
    expect(bad).toMatchObject({ isError: true, errorType: 'invalid_tool_params' });
    expect(bad.output).toContain('Invalid regular expression');
    expect(await grepSearchTool.execute({ pattern: 'root', path: '/etc' }, context(dir))).toMatchObject({ errorType: 'path_not_in_workspace' });
  });

  it('does not follow symlinks out of the workspace, nor block on a FIFO', async () => {
    await writeFile(join(base, 'outside.txt'), 'beta outside\n');
    await symlink(join(base, 'outside.txt'), join(dir, 'link.txt'));
    execFileSync('mkfifo', [join(dir, 'pipe.txt')]);
    const outcome = await grepSearchTool.execute({ pattern: 'outside' }, context(dir));
    expect(outcome.output).toContain('No matches found');
    expect(outcome.output).toContain('[1 file(s) skipped: not regular files, unreadable or outside the workspace.]');
  });

  it('skips files over the size cap and stops when the signal aborts', async () => {
    await put('huge.txt', `beta ${'x'.repeat(1024 * 1024)}`);
    const outcome = await grepSearchTool.execute({ pattern: 'beta', glob: 'huge.txt' }, context(dir));
    expect(outcome.output).toContain('[1 file(s) over 1048576 bytes skipped.]');
    const controller = new AbortController();
    controller.abort();
    expect(await grepSearchTool.execute({ pattern: 'beta' }, context(dir, { signal: controller.signal }))).toMatchObject({ errorType: 'aborted' });
  });
});
