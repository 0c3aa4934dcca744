import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool } from '../../src/tools/edit-tool.js';
import { readFileTool } from '../../src/tools/read-file-tool.js';
import { readRegularFile } from '../../src/tools/safe-read.js';
import { writeFileTool } from '../../src/tools/write-file-tool.js';
import { context, makeTempDir, removeDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

/** Fails the test instead of hanging it when a read blocks. */
function within<T>(promise: Promise<T>, ms = 3_000): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms))]);
}

describe('only regular files are read', () => {
  it('refuses a FIFO at once instead of blocking the turn', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const outcome = await within(readFileTool.execute({ file_path: fifo }, context(dir)));
    expect(outcome).toMatchObject({ isError: true, errorType: 'not_a_regular_file' });
    expect(outcome.output).toContain(`Not a regular file: ${fifo} (a FIFO)`);
    const edit = await within(editTool.execute({ file_path: fifo, old_string: 'a', new_string: 'b' }, context(dir)));
    expect(edit.output).toContain('Not a regular file');
    const write = await within(writeFileTool.execute({ file_path: fifo, content: 'x' }, context(dir)));
    expect(write.output).toContain('Not a regular file');
  });

  it('refuses /dev/zero and a symlink to it, even where /dev is an allowed root', async () => {
    await symlink('/dev/zero', join(dir, 'zeros'));
    for (const path of ['/dev/zero', join(dir, 'zeros')]) {
      const outcome = await within(readFileTool.execute({ file_path: path }, context(dir, { roots: ['/dev'] })));
      expect(outcome, path).toMatchObject({ isError: true, errorType: 'not_a_regular_file' });
      expect(outcome.output).toContain('Not a regular file: /dev/zero (a character device)');
    }
    // Without /dev as a root the symlink is refused earlier, for leaving the workspace.
    expect(await readFileTool.execute({ file_path: 'zeros' }, context(dir))).toMatchObject({ errorType: 'path_not_in_workspace' });
  });

  it('reports a directory as a directory', async () => {
    await mkdir(join(dir, 'd'));
    const read = await readRegularFile(join(dir, 'd'), { signal: new AbortController().signal });
    expect(read).toMatchObject({ ok: false, reason: 'directory' });
    expect(await readFileTool.execute({ file_path: 'd' }, context(dir))).toMatchObject({ errorType: 'target_is_directory' });
  });

  it('bounds every read in bytes and stops when the signal aborts', async () => {
    const path = join(dir, 'big.txt');
    await writeFile(path, 'x'.repeat(10_000));
    const capped = await readRegularFile(path, { signal: new AbortController().signal, maxBytes: 1_000 });
    expect(capped).toMatchObject({ ok: false, reason: 'too_large' });
    const whole = await readRegularFile(path, { signal: new AbortController().signal });
    expect(whole.ok && whole.bytes.length).toBe(10_000);
    const controller = new AbortController();
    controller.abort();
    expect(await readRegularFile(path, { signal: controller.signal })).toMatchObject({ ok: false, reason: 'aborted' });
    expect(await readFileTool.execute({ file_path: path }, context(dir, { signal: controller.signal }))).toMatchObject({ errorType: 'aborted' });
  });
});
