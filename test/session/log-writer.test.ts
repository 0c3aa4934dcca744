import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import { readSessionLog } from '../../src/session/log-reader.js';
import { SessionWriter, type WriterFs } from '../../src/session/log-writer.js';
import type { ChatRecord } from '../../src/session/records.js';
import { SID, assistant, jsonl, useTempDirs, user } from './helpers.js';

const tempDir = useTempDirs();

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('SessionWriter', () => {
  it('creates missing folders 0700 and the log 0600 regardless of umask', () => {
    const root = tempDir();
    const file = join(root, 'projects', 'p', 'chats', `${SID}.jsonl`);
    // This umask would leave the file 0400 and folders 0500 without the explicit chmods.
    const oldUmask = process.umask(0o277);
    try {
      const w = SessionWriter.open(file, { create: true });
      w.close();
    } finally {
      process.umask(oldUmask);
    }
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    for (const dir of ['projects', 'projects/p', 'projects/p/chats']) {
      expect(fs.statSync(join(root, dir)).mode & 0o777).toBe(0o700);
    }
    // The pre-existing temp root is not ours and keeps its mode.
    expect(fs.statSync(root).mode & 0o777).toBe(0o700);
  });

  it('appends one compact JSON line per record and counts them', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const w = SessionWriter.open(file, { create: true });
    const a = user({ uuid: 'a' });
    const b = assistant({ uuid: 'b', parentUuid: 'a' });
    w.append(a);
    w.append(b, { durable: true });
    expect(w.recordCount).toBe(2);
    w.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(jsonl([a, b]));
    expect((await readSessionLog(file)).records.map((r) => r.record)).toEqual([a, b]);
  });

  it('refuses to create over an existing log and to open a missing one', () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    fs.writeFileSync(file, '');
    expect(
      isMendError(
        catchError(() => SessionWriter.open(file, { create: true })),
        'session_exists',
      ),
    ).toBe(true);
    const missing = join(tempDir(), 'missing.jsonl');
    expect(
      isMendError(
        catchError(() => SessionWriter.open(missing, { create: false })),
        'session_not_found',
      ),
    ).toBe(true);
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('newline-terminates a torn tail before the first append, without changing any original byte', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const a = user({ uuid: 'a' });
    const original = jsonl([a]) + '{"uuid":"b","parentUu';
    fs.writeFileSync(file, original);
    const c = assistant({ uuid: 'c', parentUuid: 'a' });
    const d = user({ uuid: 'd', parentUuid: 'c' });
    const w = SessionWriter.open(file, { create: false });
    w.append(c);
    w.append(d);
    w.close();

    const bytes = fs.readFileSync(file);
    expect(bytes.subarray(0, original.length).toString()).toBe(original);
    expect(bytes.subarray(original.length).toString()).toBe('\n' + jsonl([c, d]));
    const read = await readSessionLog(file);
    expect(read.diagnostics).toEqual([{ code: 'malformed_line', line: 2 }]);
    expect(read.records.map((r) => r.record)).toEqual([a, c, d]);
  });

  it('adds nothing before appending to a log that ends with a newline, or to an empty one', () => {
    const dir = tempDir();
    const a = user({ uuid: 'a' });
    const b = assistant({ uuid: 'b', parentUuid: 'a' });
    for (const [name, before] of [
      ['full.jsonl', jsonl([a])],
      ['empty.jsonl', ''],
    ] as const) {
      const file = join(dir, name);
      fs.writeFileSync(file, before);
      const w = SessionWriter.open(file, { create: false });
      w.append(b);
      w.close();
      expect(fs.readFileSync(file, 'utf8')).toBe(before + jsonl([b]));
    }
  });

  it('opening and closing without appending changes nothing, even on a torn log', () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    fs.writeFileSync(file, 'torn');
    SessionWriter.open(file, { create: false }).close();
    expect(fs.readFileSync(file, 'utf8')).toBe('torn');
  });

  it('rejects an invalid record with MendError internal and writes nothing', () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const w = SessionWriter.open(file, { create: true });
    const bad = { ...user({ uuid: 'a' }), parentUuid: '' } as ChatRecord;
    const err = catchError(() => w.append(bad));
    expect(isMendError(err, 'internal')).toBe(true);
    expect((err as Error).message).toContain('parentUuid');
    expect(w.recordCount).toBe(0);
    w.close();
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });

  it('fsyncs only durable appends', () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const synced: number[] = [];
    let writerFd = -1;
    const io: WriterFs = {
      ...fs,
      openSync: (...args: Parameters<typeof fs.openSync>) => {
        const fd = fs.openSync(...args);
        if (args[0] === file) writerFd = fd;
        return fd;
      },
      fsyncSync: (fd: number) => {
        if (fd === writerFd) synced.push(fd);
        fs.fsyncSync(fd);
      },
    };
    const w = SessionWriter.open(file, { create: true, fs: io });
    w.append(user({ uuid: 'a' }));
    expect(synced).toHaveLength(0);
    w.append(assistant({ uuid: 'b', parentUuid: 'a' }), { durable: true });
    expect(synced).toEqual([writerFd]);
    w.append(user({ uuid: 'c', parentUuid: 'b' }), { durable: false });
    expect(synced).toHaveLength(1);
    w.close();
  });

  it('fault hook: sees each append with its index, can replace the bytes or fail the write', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const seen: Array<[string, number, string]> = [];
    let calls = 0;
    const w = SessionWriter.open(file, {
      create: true,
      faultHook: {
        beforeWrite(index, data) {
          seen.push(['before', index, data.toString()]);
          calls++;
          if (calls === 2) return { fail: 'EIO' };
          if (calls === 3) return data.subarray(0, 10); // a torn write
        },
        afterWrite(index) {
          seen.push(['after', index, '']);
        },
      },
    });
    const a = user({ uuid: 'a' });
    w.append(a);
    const failed = catchError(() => w.append(user({ uuid: 'b', parentUuid: 'a' })));
    expect(isMendError(failed, 'store_unavailable')).toBe(true);
    expect((failed as { details: { errno: string } }).details.errno).toBe('EIO');
    w.append(user({ uuid: 'c', parentUuid: 'a' }));
    w.close();
    expect(seen.map(([k, i]) => `${k}${i}`)).toEqual(['before0', 'after0', 'before1', 'before1', 'after1']);
    expect(seen[0]![2]).toBe(JSON.stringify(a) + '\n');
    expect(w.recordCount).toBe(2);
    const read = await readSessionLog(file);
    expect(read.records.map((r) => r.record.uuid)).toEqual(['a']);
    expect(read.diagnostics).toEqual([{ code: 'torn_tail', line: 2, bytes: 10 }]);
  });

  it('turns a full disk into store_unavailable carrying the errno', () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const io: WriterFs = {
      ...fs,
      writeSync: (() => {
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      }) as typeof fs.writeSync,
    };
    const w = SessionWriter.open(file, { create: true, fs: io });
    const err = catchError(() => w.append(user({ uuid: 'a' })));
    expect(isMendError(err, 'store_unavailable')).toBe(true);
    expect((err as { details: { errno: string } }).details.errno).toBe('ENOSPC');
    expect(w.recordCount).toBe(0);
    w.close();
  });

  it('refuses to append after close', () => {
    const w = SessionWriter.open(join(tempDir(), `${SID}.jsonl`), { create: true });
    w.close();
    w.close();
    expect(
      isMendError(
        catchError(() => w.append(user({ uuid: 'a' }))),
        'internal',
      ),
    ).toBe(true);
  });
});
