/**
 * Where session logs live: `<home>/projects/<sanitized project root>/chats/<sessionId>.jsonl`,
 * the layout Qwen Code uses, so a Qwen home works as ours.
 */
import { lstat, open, readdir, stat } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MendError } from '../errors.js';
import { LineSplitter } from '../wire/line-splitter.js';
import { canonicalSessionId, isSessionId, projectKey } from './session-ids.js';

export { canonicalSessionId, isSessionId } from './session-ids.js';

export const SESSION_FILE_RE = /^[0-9a-fA-F-]{32,36}\.jsonl$/;

export function isSessionFileName(name: string): boolean {
  return SESSION_FILE_RE.test(name);
}

/** The chats folder of a project. */
export function projectDir(home: string, projectRoot: string): string {
  return join(home, 'projects', projectKey(projectRoot), 'chats');
}

export function sessionLogPath(home: string, projectRoot: string, sessionId: string): string {
  // The id becomes a file name: anything but a UUID could point elsewhere.
  if (!isSessionId(sessionId)) throw new MendError('usage', `Not a session id (expected a UUID): ${JSON.stringify(sessionId)}`);
  return join(projectDir(home, projectRoot), `${canonicalSessionId(sessionId)}.jsonl`);
}

/** Session log files in a chats folder, sorted by name; none when the folder does not exist. */
export async function listSessions(chatsDir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(chatsDir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw new MendError('session_read_failed', `Could not list sessions in ${chatsDir}: ${(error as Error).message}`, {
      path: chatsDir,
      errno: code,
    });
  }
  // Every entry named like a session, whatever it is: one that is not a readable file
  // (a directory, a FIFO) is reported by whoever reads it, never silently left out.
  return entries
    .filter((e) => isSessionFileName(e.name))
    .map((e) => join(chatsDir, e.name))
    .sort();
}

const TAIL_WINDOWS = [8 * 1024, 64 * 1024, 1024 * 1024];

/**
 * Timestamp (ms) of the last complete, parsable line that carries one, reading
 * only the end of the file: a growing window, so one huge last record does not
 * force reading a whole 100 MB log. Null when none is found in the largest window.
 */
export async function lastRecordTime(file: string): Promise<number | null> {
  return (await lastRecordInfo(file)).ms;
}

/**
 * From the end of a log: the timestamp (ms) of the last record that has one, and the
 * `cwd` of the last record that has one (where the session was last worked on).
 */
export async function lastRecordInfo(file: string): Promise<{ ms: number | null; cwd: string | null }> {
  const handle = await open(file, 'r');
  const found: { ms: number | null; cwd: string | null } = { ms: null, cwd: null };
  try {
    const size = (await handle.stat()).size;
    for (const window of TAIL_WINDOWS) {
      const start = Math.max(0, size - window);
      const buf = Buffer.alloc(size - start);
      const { bytesRead } = await handle.read(buf, 0, buf.length, start);
      const lines: Buffer[] = [];
      LineSplitter.each(buf.subarray(0, bytesRead), (line) => void lines.push(line.bytes.subarray(line.start, line.end)));
      // Starting mid-file, the first line is the end of a line we cannot see whole.
      const first = start > 0 ? 1 : 0;
      for (let i = lines.length - 1; i >= first && (found.ms === null || found.cwd === null); i--) {
        const fields = fieldsOf(lines[i]!.toString('utf8'));
        found.ms ??= fields.ms;
        found.cwd ??= fields.cwd;
      }
      if (start === 0 || (found.ms !== null && found.cwd !== null)) return found;
    }
    return found;
  } finally {
    await handle.close();
  }
}

function fieldsOf(line: string): { ms: number | null; cwd: string | null } {
  if (line.trim() === '') return { ms: null, cwd: null };
  try {
    const value = JSON.parse(line) as unknown;
    const record = typeof value === 'object' && value !== null ? (value as { timestamp?: unknown; cwd?: unknown }) : {};
    const ms = typeof record.timestamp === 'string' ? Date.parse(record.timestamp) : NaN;
    return { ms: Number.isFinite(ms) ? ms : null, cwd: typeof record.cwd === 'string' ? record.cwd : null };
  } catch {
    return { ms: null, cwd: null };
  }
}

/**
 * Whether a session last worked on in `recordedCwd` belongs to this project. Two roots can
 * share one folder name (`/x/a-b` and `/x/a/b` both sanitize to `-x-a-b`); the recorded
 * cwd tells them apart. A session that records none (an old peer log) belongs.
 */
export function belongsToProject(recordedCwd: string | null, scope: { projectRoot: string; cwd: string }): boolean {
  if (recordedCwd === null || recordedCwd === scope.projectRoot || recordedCwd === scope.cwd) return true;
  // A log whose recorded root would live in another folder was copied or moved here on
  // purpose: it belongs. Only a different root with the SAME folder name is a collision.
  if (projectKey(recordedCwd) !== projectKey(scope.projectRoot)) return true;
  try {
    return realpathSync(recordedCwd) === scope.projectRoot;
  } catch {
    return false;
  }
}

/**
 * The session whose last record is newest (file mtime when no record has a timestamp), or
 * null. With a scope, sessions last worked on in another project (same folder name) are
 * left out.
 */
export async function findMostRecentSession(chatsDir: string, scope?: { projectRoot: string; cwd: string }): Promise<string | null> {
  let best: { file: string; ms: number } | null = null;
  for (const file of await listSessions(chatsDir)) {
    let ms: number | null;
    try {
      const info = await stat(file);
      // Not a regular file: never opened here (a FIFO would hang); its mtime still ranks it,
      // so --continue names the unreadable newest session instead of claiming there is none.
      if (!info.isFile()) {
        ms = info.mtimeMs;
      } else {
        const last = await lastRecordInfo(file);
        if (scope && !belongsToProject(last.cwd, scope)) continue;
        ms = last.ms ?? info.mtimeMs;
      }
    } catch {
      try {
        ms = (await lstat(file)).mtimeMs;
      } catch {
        continue; // vanished since listing
      }
    }
    if (best === null || ms > best.ms) best = { file, ms };
  }
  return best?.file ?? null;
}

export interface ResumeContext {
  home: string;
  projectRoot: string;
  /** Base for relative `.jsonl` paths. */
  cwd: string;
}

/**
 * Maps a `--resume` argument to a log path: a session id (a UUID) names a log in
 * this project's chats folder, a path ending in `.jsonl` is taken relative to
 * cwd. Everything else is refused without touching the disk, so an argument
 * like `../../x` or `a/b` can never name a file. Whether the file exists is the
 * caller's check (it reports session_not_found with its own context).
 */
export function resolveResumeTarget(arg: string, context: ResumeContext): string {
  if (isSessionId(arg)) return sessionLogPath(context.home, context.projectRoot, arg);
  if (arg.endsWith('.jsonl') && arg.length > '.jsonl'.length && !arg.includes('\0')) return resolve(context.cwd, arg);
  throw new MendError('invalid_resume_target', `Cannot resume ${JSON.stringify(arg)}: give a session id (UUID) or a path to a .jsonl session log`, { arg });
}
