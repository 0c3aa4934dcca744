import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensurePrivateDir, type PrivateDirFs } from '../../src/session/private-dirs.js';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** The real calls, with every folder fsync recorded by path. */
function observed(): { io: PrivateDirFs; synced: string[] } {
  const synced: string[] = [];
  const paths = new Map<number, string>();
  const io: PrivateDirFs = {
    ...fs,
    openSync: (...args: Parameters<typeof fs.openSync>) => {
      const fd = fs.openSync(...args);
      paths.set(fd, String(args[0]));
      return fd;
    },
    fsyncSync: (fd: number) => {
      synced.push(paths.get(fd) ?? `fd ${fd}`);
      fs.fsyncSync(fd);
    },
  };
  return { io, synced };
}

describe('ensurePrivateDir', () => {
  it('fsyncs the parent of every folder it creates, so a new project survives a power cut', () => {
    const root = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'mend-dirs-')));
    made.push(root);
    const { io, synced } = observed();
    const chats = join(root, 'home', 'projects', '-x', 'chats');
    ensurePrivateDir(chats, io);
    expect(fs.statSync(chats).mode & 0o777).toBe(0o700);
    expect(synced).toEqual([root, join(root, 'home'), join(root, 'home', 'projects'), join(root, 'home', 'projects', '-x')]);
  });

  it('syncs nothing when every folder exists already', () => {
    const root = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'mend-dirs-')));
    made.push(root);
    fs.mkdirSync(join(root, 'a', 'b'), { recursive: true });
    const { io, synced } = observed();
    ensurePrivateDir(join(root, 'a', 'b'), io);
    expect(synced).toEqual([]);
    ensurePrivateDir(join(root, 'a', 'b', 'c'), io);
    expect(synced).toEqual([join(root, 'a', 'b')]);
  });
});
