import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decideApproval } from '../../src/tools/approval.js';
import { editTool } from '../../src/tools/edit-tool.js';
import { listDirectoryTool } from '../../src/tools/list-directory-tool.js';
import { realPathOf, resolveToolPath } from '../../src/tools/paths.js';
import { readFileTool } from '../../src/tools/read-file-tool.js';
import type { Tool } from '../../src/tools/tool.js';
import { writeFileTool } from '../../src/tools/write-file-tool.js';
import { context, makeTempDir, removeDir } from './helpers.js';

let base: string;
let project: string;
let outside: string;
beforeEach(async () => {
  base = await makeTempDir();
  project = join(base, 'project');
  outside = join(base, 'outside');
  await mkdir(project);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'top secret\n');
  await writeFile(join(project, 'inside.txt'), 'hello\n');
});
afterEach(async () => {
  await removeDir(base);
});

/** Every file tool, called on `path` with arguments that would otherwise succeed. */
function callsOn(path: string): Array<[Tool, Record<string, unknown>]> {
  return [
    [readFileTool, { file_path: path }],
    [writeFileTool, { file_path: path, content: 'pwned' }],
    [editTool, { file_path: path, old_string: 'top', new_string: 'pwned' }],
    [listDirectoryTool, { path }],
  ];
}

describe('file tools are confined to the project root and added directories', () => {
  it('refuses absolute paths outside, with an error naming the root', async () => {
    for (const [tool, args] of callsOn(join(outside, 'secret.txt'))) {
      const outcome = await tool.execute(args, context(project));
      expect(outcome, tool.name).toMatchObject({ isError: true, errorType: 'path_not_in_workspace' });
      expect(outcome.output).toContain(`Path is outside the workspace: ${join(outside, 'secret.txt')}`);
      expect(outcome.output).toContain(`project root ${project}`);
    }
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
    expect(await readFileTool.execute({ file_path: '/etc/hostname' }, context(project))).toMatchObject({ errorType: 'path_not_in_workspace' });
  });

  it('refuses in every approval mode: yolo allows the call, the tool still refuses', async () => {
    for (const mode of ['default', 'auto-edit', 'yolo', 'plan'] as const) {
      for (const [tool, args] of callsOn(join(outside, 'secret.txt'))) {
        // Whatever the gate decides (allowed here, with the tool named in allowedTools where needed)...
        if (decideApproval(tool, mode, [tool.name]) !== 'allow') continue;
        // ...the tool itself refuses.
        expect(await tool.execute(args, context(project)), `${mode} ${tool.name}`).toMatchObject({ errorType: 'path_not_in_workspace' });
      }
    }
    expect(decideApproval(writeFileTool, 'yolo')).toBe('allow');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('refuses ../ escapes and symlinks that lead outside, also for files that do not exist yet', async () => {
    await symlink(join(outside, 'secret.txt'), join(project, 'link.txt'));
    await symlink(outside, join(project, 'linkdir'));
    for (const path of ['../outside/secret.txt', 'link.txt', 'linkdir/secret.txt']) {
      for (const [tool, args] of callsOn(path)) {
        const outcome = await tool.execute(args, context(project));
        expect(outcome, `${tool.name} ${path}`).toMatchObject({ isError: true, errorType: 'path_not_in_workspace' });
      }
    }
    const created = await writeFileTool.execute({ file_path: 'linkdir/new/deep.txt', content: 'x' }, context(project));
    expect(created).toMatchObject({ isError: true, errorType: 'path_not_in_workspace' });
    expect(created.output).toContain(`resolves to ${join(outside, 'new', 'deep.txt')}`);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('allows a symlink that stays inside, and acts on its target', async () => {
    await mkdir(join(project, 'real'));
    await writeFile(join(project, 'real', 'a.txt'), 'old');
    await symlink(join(project, 'real'), join(project, 'alias'));
    expect(await writeFileTool.execute({ file_path: 'alias/a.txt', content: 'new' }, context(project))).toMatchObject({ isError: false });
    expect(await readFile(join(project, 'real', 'a.txt'), 'utf8')).toBe('new');
  });

  it('allows added directories (--add-dir), absolute or relative to the project root', async () => {
    const outcome = await readFileTool.execute({ file_path: join(outside, 'secret.txt') }, context(project, { roots: ['../outside'] }));
    expect(outcome).toMatchObject({ isError: false, output: 'top secret\n' });
    const listed = await listDirectoryTool.execute({ path: outside }, context(project, { roots: [outside] }));
    expect(listed).toMatchObject({ isError: false });
    const refused = await readFileTool.execute({ file_path: '/etc/hostname' }, context(project, { roots: [outside] }));
    expect(refused.output).toContain(`or the added directories ${outside}`);
  });

  it('uses projectRoot, not cwd, as the boundary when both are given', async () => {
    const inside = await readFileTool.execute({ file_path: 'inside.txt' }, context(outside, { projectRoot: project }));
    expect(inside).toMatchObject({ isError: false, output: 'hello\n' });
    const cwdFile = await readFileTool.execute({ file_path: join(outside, 'secret.txt') }, context(outside, { projectRoot: project }));
    expect(cwdFile).toMatchObject({ errorType: 'path_not_in_workspace' });
  });

  it('resolves the nearest existing ancestor of a missing path', async () => {
    await symlink(outside, join(project, 'out'));
    expect(await realPathOf(join(project, 'out', 'a', 'b'))).toBe(join(outside, 'a', 'b'));
    const resolved = await resolveToolPath('missing/dir/file.txt', context(project));
    expect(resolved).toEqual({ ok: true, path: join(project, 'missing', 'dir', 'file.txt') });
  });
});
