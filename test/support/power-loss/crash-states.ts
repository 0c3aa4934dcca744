/**
 * The states a power cut can leave, rebuilt from the operations of a traced run the
 * way SQLite's crash VFS, LevelDB/RocksDB's fault injection (DropUnsyncedFileData,
 * DeleteFilesCreatedAfterLastDirSync) and ALICE do. After each operation k:
 * - a write, truncation or new size of a file is durable once that file was fsynced
 *   after it; a directory entry (new file, new folder, rename, unlink) once its folder
 *   was fsynced after it (both folders for a rename). Nothing else is promised.
 * - the states: the durable operations alone; plus each prefix of the others in
 *   program order; the next unsynced write torn after one byte and at a 512-byte
 *   boundary; that write's bytes as NUL (the file grew, its data never came); the same
 *   NUL hole with every later unsynced operation kept; and every unsynced write kept
 *   with no unsynced directory entry (files created or renamed in a folder never
 *   fsynced since are gone).
 * A state is a map from path to content (folders as null), built in memory.
 */
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import { applyWrite, type DiskOp, type DiskTrace } from './disk-ops.js';

export interface CrashState {
  /** After which operation (its trace line) the power was cut. */
  cutAt: number;
  label: string;
  files: Map<string, Buffer>;
  dirs: Set<string>;
  hash: string;
}

type Variant = { op: number; how: 'one_byte' | 'sector' | 'nul' };

/** For each operation, the trace line from which it is durable (Infinity: never). */
export function durableFrom(trace: DiskTrace): number[] {
  const syncs = new Map<number | string, number[]>();
  for (const op of trace.ops) if (op.t === 'fsync') (syncs.get(op.ino) ?? syncs.set(op.ino, []).get(op.ino)!).push(op.at);
  const firstSyncAfter = (key: number | string, at: number) => syncs.get(key)?.find((s) => s > at) ?? Infinity;
  return trace.ops.map((op) => {
    switch (op.t) {
      case 'write':
      case 'truncate':
        return firstSyncAfter(op.ino, op.at);
      case 'create':
      case 'mkdir':
      case 'unlink':
        return firstSyncAfter(dirname(op.path), op.at);
      case 'rename':
        return Math.max(firstSyncAfter(dirname(op.from), op.at), firstSyncAfter(dirname(op.to), op.at));
      case 'link':
        return firstSyncAfter(dirname(op.to), op.at);
      case 'fsync':
        return op.at;
    }
  });
}

/** Every state a cut right after trace line `cutAt` can leave (deduplicated by content). */
export function statesAt(trace: DiskTrace, durable: readonly number[], cutAt: number): CrashState[] {
  const done = trace.ops.map((op, i) => ({ op, i })).filter(({ op }) => op.at <= cutAt);
  const synced = done.filter(({ op, i }) => op.t !== 'fsync' && durable[i]! <= cutAt).map(({ i }) => i);
  const open = done.filter(({ op, i }) => op.t !== 'fsync' && durable[i]! > cutAt).map(({ i }) => i);
  const out: CrashState[] = [];
  const add = (label: string, include: readonly number[], variant?: Variant) => out.push(build(trace, cutAt, label, include, variant));

  add('durable only', synced);
  for (let n = 1; n <= open.length; n++) {
    const prefix = [...synced, ...open.slice(0, n)];
    add(n === open.length ? 'everything written' : `durable + first ${n} unsynced`, prefix);
  }
  const writes = open.filter((i) => trace.ops[i]!.t === 'write');
  for (const w of writes) {
    const before = [...synced, ...open.filter((i) => i < w)];
    const op = trace.ops[w] as Extract<DiskOp, { t: 'write' }>;
    if (op.data.length > 1) add(`op ${w} torn after 1 byte`, [...before, w], { op: w, how: 'one_byte' });
    if (sectorCut(op) !== null) add(`op ${w} torn at a 512-byte boundary`, [...before, w], { op: w, how: 'sector' });
    add(`op ${w} grown as NUL bytes`, [...before, w], { op: w, how: 'nul' });
    const later = open.filter((i) => i > w);
    if (later.length > 0) add(`op ${w} a NUL hole under later writes`, [...before, w, ...later], { op: w, how: 'nul' });
  }
  const dirOps = open.filter((i) => trace.ops[i]!.t !== 'write' && trace.ops[i]!.t !== 'truncate');
  if (dirOps.length > 0) {
    add('unsynced data, no unsynced directory entry', [...synced, ...open.filter((i) => !dirOps.includes(i))]);
  }
  const seen = new Set<string>();
  return out.filter((s) => (seen.has(s.hash) ? false : (seen.add(s.hash), true)));
}

/** Bytes of a write up to the first 512-byte boundary of the file inside it, if any. */
function sectorCut(op: Extract<DiskOp, { t: 'write' }>): number | null {
  const boundary = Math.floor(op.offset / 512) * 512 + 512;
  const keep = boundary - op.offset;
  return keep > 0 && keep < op.data.length ? keep : null;
}

function build(trace: DiskTrace, cutAt: number, label: string, include: readonly number[], variant?: Variant): CrashState {
  const names = new Map(trace.initial);
  const dirs = new Set(trace.initialDirs);
  const data = new Map(trace.initialData);
  for (const i of [...include].sort((a, b) => a - b)) {
    const op = trace.ops[i]!;
    switch (op.t) {
      case 'mkdir':
        if (dirs.has(dirname(op.path))) dirs.add(op.path);
        break;
      case 'create':
        if (dirs.has(dirname(op.path))) names.set(op.path, op.ino);
        if (!data.has(op.ino)) data.set(op.ino, Buffer.alloc(0));
        break;
      case 'write': {
        let bytes = op.data;
        if (variant?.op === i) {
          if (variant.how === 'one_byte') bytes = bytes.subarray(0, 1);
          else if (variant.how === 'sector') bytes = bytes.subarray(0, sectorCut(op)!);
          else bytes = Buffer.alloc(bytes.length);
        }
        data.set(op.ino, applyWrite(data.get(op.ino) ?? Buffer.alloc(0), op.offset, bytes));
        break;
      }
      case 'truncate': {
        const current = data.get(op.ino) ?? Buffer.alloc(0);
        const next = Buffer.alloc(op.size);
        current.copy(next, 0, 0, Math.min(op.size, current.length));
        data.set(op.ino, next);
        break;
      }
      case 'rename': {
        const ino = names.get(op.from);
        if (ino === undefined || !dirs.has(dirname(op.to))) break;
        names.delete(op.from);
        names.set(op.to, ino);
        break;
      }
      case 'link': {
        const ino = names.get(op.from);
        if (ino !== undefined && dirs.has(dirname(op.to))) names.set(op.to, ino);
        break;
      }
      case 'unlink':
        names.delete(op.path);
        dirs.delete(op.path);
        break;
      case 'fsync':
        break;
    }
  }
  const files = new Map<string, Buffer>();
  for (const [path, ino] of names) if (reachable(path, dirs)) files.set(path, data.get(ino) ?? Buffer.alloc(0));
  const hash = createHash('sha1');
  for (const path of [...files.keys()].sort()) hash.update(path).update('\0').update(files.get(path)!).update('\0');
  for (const dir of [...dirs].sort()) hash.update('d:').update(dir).update('\0');
  return { cutAt, label, files, dirs, hash: hash.digest('hex') };
}

function reachable(path: string, dirs: ReadonlySet<string>): boolean {
  return dirs.has(dirname(path));
}
