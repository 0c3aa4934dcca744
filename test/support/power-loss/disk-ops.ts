/**
 * Turns the syscalls of one traced run into what a power cut cares about: the
 * operations mend made on files and folders under the sandbox (data writes,
 * truncations, directory entries, fsyncs), the moments mend told the world
 * something (a write to its stdout or to a TCP socket: a stream-json frame, an ACP
 * message, an HTTP answer or SSE event) and the moments a tool process started
 * (the first execve of a child process). Tool processes' own file writes are theirs,
 * not mend's, and are left out.
 */
import { dirname, resolve } from 'node:path';
import { decodeIovecs, decodeString, parseFd, retNumber, type Syscall } from './strace-log.js';

export type DiskOp =
  | { t: 'mkdir'; at: number; path: string }
  | { t: 'create'; at: number; path: string; ino: number }
  | { t: 'write'; at: number; ino: number; offset: number; data: Buffer }
  | { t: 'truncate'; at: number; ino: number; size: number }
  | { t: 'rename'; at: number; from: string; to: string }
  | { t: 'link'; at: number; from: string; to: string }
  | { t: 'unlink'; at: number; path: string }
  | { t: 'fsync'; at: number; ino: number | string };

/** A point after which something must already be durable. */
export interface Barrier {
  at: number;
  kind: 'stdout' | 'socket' | 'tool_start';
  /** The first bytes of what was sent, or the tool's command line. */
  what: string;
  /** All that a socket write sent (for which records it reveals, see state-checks.ts). */
  text?: string;
}

export interface InitialEntry {
  path: string;
  kind: 'file' | 'dir';
  data?: Buffer;
}

export interface DiskTrace {
  /** Inode numbers of the files present before the run (by path). */
  initial: Map<string, number>;
  initialData: Map<number, Buffer>;
  initialDirs: Set<string>;
  ops: DiskOp[];
  barriers: Barrier[];
  /** argv of each tool start (same order as the tool_start barriers). */
  toolStarts: Array<{ at: number; argv: string[] }>;
  /** Unparsed calls on sandbox files (for the report: nothing may be silently missed). */
  unknown: string[];
  /** What mend sent to the database server (`dbPort`), not a client: PostgreSQL store runs. */
  dbWrites: Array<{ at: number; text: string }>;
}

interface OpenFile {
  /** A file inode, or a folder (by path), or null for anything outside the sandbox. */
  ino: number | null;
  dir: string | null;
  append: boolean;
  pos: number;
}

const MEND_SYSCALLS_ON_FILES = new Set(['write', 'pwrite64', 'writev', 'pwritev', 'pwritev2', 'fsync', 'fdatasync', 'ftruncate', 'close', 'sendto', 'sendmsg']);

export function diskTrace(calls: readonly Syscall[], sandbox: string, cwd: string, before: readonly InitialEntry[], dbPort?: number): DiskTrace {
  const inside = (p: string) => p === sandbox || p.startsWith(sandbox + '/');
  const { mendPids, toolRoots } = classifyPids(calls);

  let nextIno = 1;
  const names = new Map<string, number>(); // visible namespace: path -> inode (files)
  const dirs = new Set<string>();
  const data = new Map<number, Buffer>(); // visible content
  const initial = new Map<string, number>();
  const initialData = new Map<number, Buffer>();
  for (const e of before) {
    if (e.kind === 'dir') dirs.add(e.path);
    else {
      const ino = nextIno++;
      names.set(e.path, ino);
      initial.set(e.path, ino);
      data.set(ino, e.data ?? Buffer.alloc(0));
      initialData.set(ino, e.data ?? Buffer.alloc(0));
    }
  }
  const initialDirs = new Set(dirs);
  const fds = new Map<number, OpenFile>();
  const ops: DiskOp[] = [];
  const barriers: Barrier[] = [];
  const toolStarts: Array<{ at: number; argv: string[] }> = [];
  const unknown: string[] = [];
  const dbWrites: Array<{ at: number; text: string }> = [];
  const started = new Set<number>();

  const pathArg = (dirTok: string | undefined, pathTok: string): string => {
    const p = decodeString(pathTok).toString('utf8');
    if (p.startsWith('/')) return resolve(p);
    const base = dirTok ? (parseFd(dirTok).path ?? cwd) : cwd;
    return resolve(base, p);
  };
  const writeTo = (at: number, file: OpenFile, offset: number | null, bytes: Buffer) => {
    if (file.ino === null || bytes.length === 0) return;
    const current = data.get(file.ino) ?? Buffer.alloc(0);
    const off = offset ?? (file.append ? current.length : file.pos);
    ops.push({ t: 'write', at, ino: file.ino, offset: off, data: bytes });
    data.set(file.ino, applyWrite(current, off, bytes));
    if (offset === null) file.pos = off + bytes.length;
  };

  for (const c of calls) {
    if (toolRoots.has(c.pid) && c.name === 'execve' && !started.has(c.pid)) {
      started.add(c.pid);
      const argv = argvOf(c);
      barriers.push({ at: c.entry, kind: 'tool_start', what: argv.join(' ').slice(0, 120) });
      toolStarts.push({ at: c.entry, argv });
      continue;
    }
    if (!mendPids.has(c.pid)) continue;
    const r = retNumber(c.ret);
    switch (c.name) {
      case 'open':
      case 'openat':
      case 'creat': {
        if (r < 0) break;
        const path = c.name === 'openat' ? pathArg(c.args[0], c.args[1]!) : pathArg(undefined, c.args[0]!);
        const flags = c.name === 'creat' ? 'O_CREAT|O_WRONLY|O_TRUNC' : (c.args[c.name === 'openat' ? 2 : 1] ?? '');
        if (!inside(path)) {
          fds.set(r, { ino: null, dir: null, append: false, pos: 0 });
          break;
        }
        if (dirs.has(path)) {
          fds.set(r, { ino: null, dir: path, append: false, pos: 0 });
          break;
        }
        let ino = names.get(path);
        if (ino === undefined) {
          ino = nextIno++;
          names.set(path, ino);
          data.set(ino, Buffer.alloc(0));
          ops.push({ t: 'create', at: c.exit, path, ino });
        } else if (flags.includes('O_TRUNC') && (data.get(ino)?.length ?? 0) > 0) {
          ops.push({ t: 'truncate', at: c.exit, ino, size: 0 });
          data.set(ino, Buffer.alloc(0));
        }
        fds.set(r, { ino, dir: null, append: flags.includes('O_APPEND'), pos: 0 });
        break;
      }
      case 'mkdir':
      case 'mkdirat': {
        if (r < 0) break;
        const path = c.name === 'mkdirat' ? pathArg(c.args[0], c.args[1]!) : pathArg(undefined, c.args[0]!);
        if (!inside(path)) break;
        dirs.add(path);
        ops.push({ t: 'mkdir', at: c.exit, path });
        break;
      }
      case 'rename':
      case 'renameat':
      case 'renameat2': {
        if (r < 0) break;
        const [from, to] =
          c.name === 'rename'
            ? [pathArg(undefined, c.args[0]!), pathArg(undefined, c.args[1]!)]
            : [pathArg(c.args[0], c.args[1]!), pathArg(c.args[2], c.args[3]!)];
        if (!inside(from) && !inside(to)) break;
        const ino = names.get(from);
        if (ino === undefined) {
          unknown.push(`rename of an unknown file ${from}`);
          break;
        }
        names.delete(from);
        names.set(to, ino);
        ops.push({ t: 'rename', at: c.exit, from, to });
        break;
      }
      case 'link':
      case 'linkat': {
        if (r < 0) break;
        const [from, to] =
          c.name === 'link'
            ? [pathArg(undefined, c.args[0]!), pathArg(undefined, c.args[1]!)]
            : [pathArg(c.args[0], c.args[1]!), pathArg(c.args[2], c.args[3]!)];
        const ino = names.get(from);
        if (!inside(to)) break;
        if (ino === undefined) {
          unknown.push(`link of an unknown file ${from}`);
          break;
        }
        names.set(to, ino);
        ops.push({ t: 'link', at: c.exit, from, to });
        break;
      }
      case 'unlink':
      case 'unlinkat':
      case 'rmdir': {
        if (r < 0) break;
        const path = c.name === 'unlinkat' ? pathArg(c.args[0], c.args[1]!) : pathArg(undefined, c.args[0]!);
        if (!inside(path)) break;
        names.delete(path);
        dirs.delete(path);
        ops.push({ t: 'unlink', at: c.exit, path });
        break;
      }
      case 'truncate': {
        if (r < 0) break;
        const path = pathArg(undefined, c.args[0]!);
        const ino = names.get(path);
        if (ino === undefined) break;
        const size = Number(c.args[1]);
        ops.push({ t: 'truncate', at: c.exit, ino, size });
        data.set(ino, resize(data.get(ino)!, size));
        break;
      }
      default: {
        if (!MEND_SYSCALLS_ON_FILES.has(c.name)) break;
        const { fd, path: deco } = parseFd(c.args[0] ?? '');
        let file = fds.get(fd);
        if (c.name === 'close') {
          fds.delete(fd);
          break;
        }
        if (r < 0) break;
        const isSocket = deco !== null && /^(TCP|TCPv6|socket):/.test(deco);
        if ((fd === 1 && !file) || isSocket) {
          if (['write', 'writev', 'sendto', 'sendmsg'].includes(c.name) && r > 0) {
            const bytes =
              c.name === 'writev' ? decodeIovecs(c.args[1]!) : c.name === 'write' || c.name === 'sendto' ? decodeString(c.args[1]!) : Buffer.alloc(0);
            const text = bytes.toString('utf8');
            if (isSocket && dbPort !== undefined && deco!.includes(`:${dbPort}]`)) {
              dbWrites.push({ at: c.entry, text });
              break;
            }
            // An SSE write may carry several events: name them all.
            const events = [...text.matchAll(/^event: (\w+)/gm)].map((m) => m[1]);
            const what = events.length > 0 ? `SSE ${events.join(',')}` : text.slice(0, 120);
            barriers.push(isSocket ? { at: c.entry, kind: 'socket', what, text } : { at: c.entry, kind: 'stdout', what });
          }
          break;
        }
        if (!file) {
          if (deco !== null && inside(deco)) unknown.push(`${c.name} on ${deco} opened before tracing`);
          break;
        }
        if (c.name === 'fsync' || c.name === 'fdatasync') {
          if (file.ino !== null) ops.push({ t: 'fsync', at: c.exit, ino: file.ino });
          else if (file.dir !== null) ops.push({ t: 'fsync', at: c.exit, ino: file.dir });
          break;
        }
        if (c.name === 'ftruncate') {
          if (file.ino === null) break;
          const size = Number(c.args[1]);
          ops.push({ t: 'truncate', at: c.exit, ino: file.ino, size });
          data.set(file.ino, resize(data.get(file.ino)!, size));
          break;
        }
        if (file.ino === null) break;
        const bytes = c.name === 'writev' || c.name.startsWith('pwritev') ? decodeIovecs(c.args[1]!) : decodeString(c.args[1]!);
        const written = bytes.subarray(0, r);
        if (written.length < r) unknown.push(`${c.name} of ${r} bytes printed as ${bytes.length} (raise strace -s)`);
        const offset = c.name === 'pwrite64' ? Number(c.args[3]) : c.name.startsWith('pwritev') ? Number(c.args[3]) : null;
        writeTo(c.exit, file, offset, written);
        file = undefined;
      }
    }
  }
  return { initial, initialData, initialDirs, ops: ops.sort((a, b) => a.at - b.at), barriers, toolStarts, unknown, dbWrites };
}

/** mend's own threads (one fd table), and the child processes it started (tools). */
/** An execve's argv, decoded (strace prints strings hex-escaped: -xx). */
function argvOf(c: Syscall): string[] {
  return [...(c.args[1] ?? '').matchAll(/"((?:\\x[0-9a-f]{2}|[^"])*)"/g)].map((m) => decodeString(`"${m[1]}"`).toString('utf8'));
}

/** How mend's helper processes show in their execve: the shell helper's script, the socket-copying child's inline script. */
const MEND_HELPERS = ['shell-run/shell-worker.js', "process.on('message'"];

function classifyPids(calls: readonly Syscall[]): { mendPids: Set<number>; toolRoots: Set<number> } {
  const root = calls[0]?.pid ?? 0;
  const children = new Map<number, { parent: number; thread: boolean }>();
  for (const c of calls) {
    if (!['clone', 'clone3', 'fork', 'vfork'].includes(c.name)) continue;
    const child = retNumber(c.ret);
    if (!(child > 0)) continue;
    children.set(child, { parent: c.pid, thread: c.args.join(',').includes('CLONE_THREAD') });
  }
  const mendPids = new Set<number>([root]);
  const toolRoots = new Set<number>();
  const isMend = (pid: number, seen = 0): boolean => {
    if (pid === root) return true;
    const info = children.get(pid);
    if (!info || !info.thread || seen > 1000) return false;
    return isMend(info.parent, seen + 1);
  };
  // mend's own helper processes (the daemon's shell helpers, the child that copies its
  // listening socket) are not tools: the processes they start are.
  const firstExec = new Map<number, string>();
  for (const c of calls) if (c.name === 'execve' && !firstExec.has(c.pid)) firstExec.set(c.pid, argvOf(c).join(' '));
  const isHelper = (pid: number): boolean => {
    const info = children.get(pid);
    return info !== undefined && !info.thread && isMend(info.parent) && MEND_HELPERS.some((mark) => (firstExec.get(pid) ?? '').includes(mark));
  };
  const underHelper = (pid: number, seen = 0): boolean => {
    if (isHelper(pid)) return true;
    const info = children.get(pid);
    if (!info || !info.thread || seen > 1000) return false;
    return underHelper(info.parent, seen + 1);
  };
  for (const [pid, info] of children) {
    if (isMend(pid)) mendPids.add(pid);
    else if (!info.thread && (isMend(info.parent) || underHelper(info.parent)) && !isHelper(pid)) toolRoots.add(pid);
  }
  return { mendPids, toolRoots };
}

export function applyWrite(current: Buffer, offset: number, bytes: Buffer): Buffer {
  const size = Math.max(current.length, offset + bytes.length);
  const out = Buffer.alloc(size);
  current.copy(out, 0);
  bytes.copy(out, offset);
  return out;
}

function resize(current: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size);
  current.copy(out, 0, 0, Math.min(size, current.length));
  return out;
}

export function parentOf(path: string): string {
  return dirname(path);
}
