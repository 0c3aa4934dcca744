import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMendError, type MendError } from '../../src/errors.js';
import { acquireSessionLock, lockPathFor, processStartTime } from '../../src/session/session-lock.js';
import { SID, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const me = { pid: process.pid, startTime: processStartTime(process.pid) };
const hasProc = fs.existsSync('/proc/self/stat');

function logIn(dir: string): string {
  return join(dir, `${SID}.jsonl`);
}

function lockError(fn: () => unknown): MendError {
  try {
    fn();
  } catch (error) {
    if (isMendError(error)) return error;
    throw error;
  }
  throw new Error('expected the lock to be refused');
}

/** A pid that existed and has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid!;
}

describe('processStartTime', () => {
  it.runIf(hasProc)('reads field 22 of /proc/<pid>/stat for a live process, null for a dead one', () => {
    const own = processStartTime(process.pid);
    expect(own).toMatch(/^\d+$/);
    expect(processStartTime(process.pid)).toBe(own);
    // The parent started no later than we did.
    expect(Number(processStartTime(process.ppid))).toBeLessThanOrEqual(Number(own));
    expect(processStartTime(deadPid())).toBeNull();
    expect(processStartTime(-1)).toBeNull();
  });
});

describe('acquireSessionLock', () => {
  it('creates <log>.lock (0600) with {pid, startTime} and removes it on release', () => {
    const log = logIn(tempDir());
    const lock = acquireSessionLock(log, me);
    expect(lock.path).toBe(`${log}.lock`);
    expect(JSON.parse(fs.readFileSync(lock.path, 'utf8'))).toEqual({ pid: process.pid, startTime: me.startTime });
    expect(fs.statSync(lock.path).mode & 0o777).toBe(0o600);
    lock.release();
    expect(fs.existsSync(lock.path)).toBe(false);
    lock.release(); // idempotent
  });

  it('refuses a second writer in the same process with session_locked naming the pid', () => {
    const log = logIn(tempDir());
    const first = acquireSessionLock(log, me);
    const err = lockError(() => acquireSessionLock(log, me));
    expect(err.code).toBe('session_locked');
    expect(err.message).toContain(`pid ${process.pid}`);
    expect(err.details).toMatchObject({ pid: process.pid });
    first.release();
    acquireSessionLock(log, me).release();
  });

  it.runIf(hasProc)('refuses while another live process holds the lock, takes it once that process is gone', async () => {
    const log = logIn(tempDir());
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const pid = child.pid!;
      fs.writeFileSync(lockPathFor(log), JSON.stringify({ pid, startTime: processStartTime(pid) }));
      const err = lockError(() => acquireSessionLock(log, me));
      expect(err.code).toBe('session_locked');
      expect(err.details).toMatchObject({ pid });
      expect(err.message).toContain(`pid ${pid}`);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    const lock = acquireSessionLock(log, me);
    expect(JSON.parse(fs.readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('takes over a lock whose pid is dead', () => {
    const log = logIn(tempDir());
    const pid = deadPid();
    fs.writeFileSync(lockPathFor(log), JSON.stringify({ pid, startTime: '1' }));
    const lock = acquireSessionLock(log, me);
    expect(JSON.parse(fs.readFileSync(lock.path, 'utf8'))).toEqual({ pid: process.pid, startTime: me.startTime });
    lock.release();
  });

  it.runIf(hasProc)('takes over a lock of a live pid with a different start time (pid reuse)', () => {
    const log = logIn(tempDir());
    fs.writeFileSync(lockPathFor(log), JSON.stringify({ pid: process.pid, startTime: '12345' }));
    const lock = acquireSessionLock(log, me);
    expect(JSON.parse(fs.readFileSync(lock.path, 'utf8'))).toEqual({ pid: process.pid, startTime: me.startTime });
    lock.release();
  });

  it('does not follow a symlink at the lock path and leaves its target untouched', () => {
    const dir = tempDir();
    const log = logIn(dir);
    const target = join(dir, 'precious.txt');
    fs.writeFileSync(target, 'do not touch');
    fs.symlinkSync(target, lockPathFor(log));
    const err = lockError(() => acquireSessionLock(log, me));
    expect(err.code).toBe('session_locked');
    expect(err.message).toContain('symlink');
    expect(fs.readFileSync(target, 'utf8')).toBe('do not touch');
    expect(fs.lstatSync(lockPathFor(log)).isSymbolicLink()).toBe(true);
  });

  it('a dangling symlink is refused too and nothing is created at its target', () => {
    const dir = tempDir();
    const log = logIn(dir);
    const target = join(dir, 'nowhere');
    fs.symlinkSync(target, lockPathFor(log));
    expect(lockError(() => acquireSessionLock(log, me)).code).toBe('session_locked');
    expect(fs.existsSync(target)).toBe(false);
  });

  it('an unparsable lock is held while young and stale once older than 2 s', () => {
    const log = logIn(tempDir());
    fs.writeFileSync(lockPathFor(log), '');
    const written = fs.statSync(lockPathFor(log)).mtimeMs;
    const young = lockError(() => acquireSessionLock(log, { ...me, now: () => written + 1000 }));
    expect(young.code).toBe('session_locked');
    expect(young.details).toMatchObject({ pid: null });
    expect(fs.readFileSync(lockPathFor(log), 'utf8')).toBe('');
    const lock = acquireSessionLock(log, { ...me, now: () => written + 2500 });
    expect(JSON.parse(fs.readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('release does not delete a lock that another process has since taken over', () => {
    const log = logIn(tempDir());
    const lock = acquireSessionLock(log, me);
    fs.unlinkSync(lock.path);
    fs.writeFileSync(lock.path, JSON.stringify({ pid: 1, startTime: null }));
    lock.release();
    expect(fs.readFileSync(lock.path, 'utf8')).toBe(JSON.stringify({ pid: 1, startTime: null }));
  });

  it('stillHeld: the very file this lock wrote, untouched or only chmod-ed; not once it is removed, replaced (even by the same text) or rewritten', () => {
    const log = logIn(tempDir());
    const lock = acquireSessionLock(log, me);
    expect(lock.stillHeld()).toBe(true);
    // Touched but the same file with the same text: read whole, still ours.
    fs.chmodSync(lock.path, 0o600);
    expect(lock.stillHeld()).toBe(true);
    const text = fs.readFileSync(lock.path, 'utf8');
    // Another writer's file in its place, byte for byte the same.
    fs.writeFileSync(`${lock.path}.other`, text);
    fs.renameSync(`${lock.path}.other`, lock.path);
    expect(lock.stillHeld()).toBe(false);
    lock.release();
    // Rewritten in place (same inode), same length.
    const second = acquireSessionLock(logIn(tempDir()), me);
    expect(second.stillHeld()).toBe(true);
    const mine = fs.readFileSync(second.path, 'utf8');
    fs.writeFileSync(
      second.path,
      mine.replace(/"pid":\d/, (m) => m.slice(0, -1) + (m.endsWith('9') ? '8' : '9')),
    );
    expect(fs.readFileSync(second.path, 'utf8').length).toBe(mine.length);
    expect(second.stillHeld()).toBe(false);
    fs.rmSync(second.path);
    const third = acquireSessionLock(logIn(tempDir()), me);
    fs.rmSync(third.path);
    expect(third.stillHeld()).toBe(false);
    second.release();
    third.release();
  });

  it('creates a missing session folder (0700) for the lock', () => {
    const root = tempDir();
    const log = join(root, 'chats', `${SID}.jsonl`);
    const lock = acquireSessionLock(log, me);
    expect(fs.statSync(join(root, 'chats')).mode & 0o777).toBe(0o700);
    lock.release();
  });
});
