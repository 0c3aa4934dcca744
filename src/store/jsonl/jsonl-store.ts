/**
 * The embedded default store: one JSONL log per session under
 * `<home>/projects/<sanitized project root>/chats/<sessionId>.jsonl`, Qwen Code's
 * layout, with a lock file per session for the single writer. For this store a
 * ref's `location` is the log's path.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { basename } from 'node:path';
import { MendError, errorCodeOf, errorMessageOf } from '../../errors.js';
import type { ActiveWriter } from '../../session/active-writer.js';
import { readSessionLog } from '../../session/log-reader.js';
import type { ReadResult } from '../session-reads.js';
import type { WriteFaultHook } from '../../session/log-writer.js';
import type { AppendMode } from '../../session/queued-append/log-appender.js';
import { outlineReader, type HistoryReadOptions, type OutlineParallel, type SessionOutline } from '../../session/outline/history-reader.js';
import { acquireSessionLock, lockHolder, processStartTime } from '../../session/session-lock.js';
import {
  belongsToProject,
  canonicalSessionId,
  findMostRecentSession,
  isSessionId,
  lastRecordInfo,
  listSessions,
  projectDir,
  resolveResumeTarget,
  sessionLogPath,
} from '../../session/session-paths.js';
import type { LogListing, PlanCheckpointSlot, ProjectScope, SessionListing, SessionRef, SessionStore, WriterIdentity, WriterLease } from '../session-store.js';
import { JsonlLease } from './jsonl-lease.js';
import { jsonlLines } from './jsonl-lines.js';

export interface JsonlStoreOptions {
  /** MEND_HOME. */
  home: string;
  /** Crash injection for the reliability tests. */
  faultHook?: WriteFaultHook | undefined;
  /** ISO clock for lease `since`. */
  now?: () => string;
  /** Where warnings go (a group- or world-writable folder under MEND_HOME). */
  warn?: (message: string) => void;
  /** How a large log's outline pass uses a worker thread (default: from 16 MiB on; the CLI passes false below four CPUs), or false for none. */
  outline?: OutlineParallel | false;
  /** False: the outline pass parses every line instead of scanning ordinary record lines (MEND_OUTLINE_SCAN=0). */
  outlineScan?: boolean;
  /** How leases append: `sync` (default) or `queued` (I/O on the thread pool, for the daemon; src/session/queued-append). */
  appendMode?: AppendMode;
  /**
   * Plan checkpoints (src/runtime/checkpoint) in `<home>/cache/checkpoints`, for every log
   * this store reads (its own and other writers' logs opened by path); `note` gets why one
   * was not used; `minBytes`: the shortest log that gets one (PlanCheckpointSlot.minBytes).
   * Off when absent (MEND_CHECKPOINTS=0 in the CLI).
   */
  checkpoints?: { note?: ((message: string) => void) | undefined; minBytes?: number | undefined } | undefined;
}

async function isRegularFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() === true;
}

function realPathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export class JsonlSessionStore implements SessionStore {
  readonly kind = 'jsonl' as const;

  constructor(private readonly options: JsonlStoreOptions) {}

  private refFor(path: string, projectRoot: string): SessionRef {
    const stem = basename(path, '.jsonl');
    return { store: 'jsonl', sessionId: isSessionId(stem) ? stem : '', projectRoot, location: path };
  }

  async newSession(scope: ProjectScope, spelled: string): Promise<SessionRef> {
    const sessionId = canonicalSessionId(spelled);
    const path = sessionLogPath(this.options.home, scope.projectRoot, sessionId);
    if (existsSync(path)) throw new MendError('session_exists', `session ${sessionId} already exists`, { sessionId });
    return { store: 'jsonl', sessionId, projectRoot: scope.projectRoot, location: path };
  }

  async resolve(scope: ProjectScope, target: string): Promise<SessionRef> {
    const path = resolveResumeTarget(target, { home: this.options.home, projectRoot: scope.projectRoot, cwd: scope.cwd });
    // An id names a session of THIS project: one whose folder it shares only by name (another
    // root that sanitizes alike) is not resumed as this project's. A path is taken as given.
    if (isSessionId(target) && (await isRegularFile(path))) {
      const { cwd } = await lastRecordInfo(path);
      if (!belongsToProject(cwd, scope)) {
        throw new MendError(
          'session_not_found',
          `session ${target} belongs to ${cwd}, not to ${scope.projectRoot} (their session folder names collide); resume it by path to use it here`,
          { path },
        );
      }
    }
    // The real file, not the name: a symlink to a live session's log must find that session's
    // lock (and its writer), not take a second lock of its own.
    return this.refFor(realPathOrSelf(path), scope.projectRoot);
  }

  async latest(scope: ProjectScope): Promise<SessionRef | null> {
    const path = await findMostRecentSession(projectDir(this.options.home, scope.projectRoot), scope);
    return path === null ? null : this.refFor(path, scope.projectRoot);
  }

  async list(scope: ProjectScope): Promise<SessionListing[]> {
    const rows: SessionListing[] = [];
    for (const path of await listSessions(projectDir(this.options.home, scope.projectRoot))) {
      const ref = this.refFor(path, scope.projectRoot);
      try {
        if ((await isRegularFile(path)) && !belongsToProject((await lastRecordInfo(path)).cwd, scope)) continue;
        const read = await readSessionLog(path, isSessionId(ref.sessionId) ? { fileSessionId: ref.sessionId } : {});
        const firstUser = read.records.find((r) => r.record.type === 'user')?.record;
        const firstText = firstUser?.type === 'user' ? firstUser.message.parts.find((p) => typeof p.text === 'string')?.text : undefined;
        rows.push({
          ref: read.sessionId && !ref.sessionId ? { ...ref, sessionId: read.sessionId } : ref,
          started: read.records[0]?.record.timestamp ?? null,
          lastUpdate: read.records.at(-1)?.record.timestamp ?? null,
          records: read.records.length,
          firstPrompt: firstText === undefined ? null : firstText.slice(0, 200),
        });
      } catch (error) {
        rows.push({ ref, started: null, lastUpdate: null, records: 0, firstPrompt: null, error: { code: errorCodeOf(error), message: errorMessageOf(error) } });
      }
    }
    return rows.sort((a, b) => (b.lastUpdate ?? '').localeCompare(a.lastUpdate ?? ''));
  }

  async listLogs(scope: ProjectScope): Promise<LogListing[]> {
    const paths = await listSessions(projectDir(this.options.home, scope.projectRoot));
    const found: Array<(LogListing & { lastMs: number }) | null> = new Array(paths.length).fill(null);
    const look = async (i: number): Promise<void> => {
      const path = paths[i]!;
      const ref = this.refFor(path, scope.projectRoot);
      try {
        const last = (await isRegularFile(path)) ? await lastRecordInfo(path) : null;
        if (last !== null && !belongsToProject(last.cwd, scope)) return;
        found[i] = { ref, lastMs: last?.ms ?? Number.NEGATIVE_INFINITY };
      } catch (error) {
        found[i] = { ref, lastMs: Number.NEGATIVE_INFINITY, error: { code: errorCodeOf(error), message: errorMessageOf(error) } };
      }
    };
    // Sixteen logs at once: each is a few small reads, whose waits overlap.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < paths.length) await look(next++);
    };
    await Promise.all(Array.from({ length: Math.min(16, paths.length) }, worker));
    const listed = found.filter((f): f is LogListing & { lastMs: number } => f !== null);
    // Newest first (stable: by name among equals).
    return listed.sort((a, b) => (a.lastMs === b.lastMs ? 0 : b.lastMs > a.lastMs ? 1 : -1)).map(({ lastMs: _lastMs, ...listing }) => listing);
  }

  async exists(ref: SessionRef): Promise<boolean> {
    return existsSync(ref.location);
  }

  read(ref: SessionRef): Promise<ReadResult> {
    // A file named by a session id: that id is the session's (one foreign line cannot hide it).
    return readSessionLog(ref.location, isSessionId(ref.sessionId) ? { fileSessionId: ref.sessionId } : {});
  }

  readLines(ref: SessionRef): AsyncIterable<string> {
    return jsonlLines(ref.location);
  }

  readOutline(ref: SessionRef): Promise<SessionOutline> {
    return outlineReader.read(ref.location, this.outlineOptions(ref));
  }

  checkpointSlot(ref: SessionRef): PlanCheckpointSlot | null {
    const checkpoints = this.options.checkpoints;
    if (checkpoints === undefined || ref.foreign) return null;
    // Keyed by the log's path; the checkpoint itself says which file (device, inode) and bytes it describes.
    const key = createHash('sha256').update(ref.location).digest('hex').slice(0, 40);
    return {
      path: ref.location,
      cacheFile: join(this.options.home, 'cache', 'checkpoints', `${key}.ckpt`),
      readOptions: this.outlineOptions(ref),
      note: checkpoints.note,
      minBytes: checkpoints.minBytes,
    };
  }

  private outlineOptions(ref: SessionRef): HistoryReadOptions {
    const options: HistoryReadOptions = isSessionId(ref.sessionId) ? { fileSessionId: ref.sessionId } : {};
    if (this.options.outlineScan === false) options.scan = false;
    const outline = this.options.outline ?? {};
    const warn = this.options.warn;
    options.parallel =
      outline === false || warn === undefined
        ? outline
        : { ...outline, onWorkerError: (error) => warn(`the outline worker thread failed (${errorMessageOf(error)}); the log was read on one thread`) };
    return options;
  }

  async activeWriter(ref: SessionRef): Promise<ActiveWriter | null> {
    const owner = lockHolder(ref.location);
    if (!owner) return null;
    return { store: 'jsonl', host: owner.host ?? 'localhost', pid: owner.pid, since: owner.since ?? '' };
  }

  async acquire(ref: SessionRef, who: WriterIdentity): Promise<WriterLease> {
    this.warnAboutOpenFolders(ref);
    const since = (this.options.now ?? (() => new Date().toISOString()))();
    const lock = acquireSessionLock(ref.location, { pid: who.pid, startTime: processStartTime(who.pid), host: who.host, since });
    return new JsonlLease(ref, { store: 'jsonl', host: who.host, pid: who.pid, since }, lock, this.options.faultHook, this.options.appendMode);
  }

  async close(): Promise<void> {}

  /** Session logs hold prompts and tool output: a folder others may write to is worth a warning. */
  private warnAboutOpenFolders(ref: SessionRef): void {
    if (!this.options.warn) return;
    for (let dir = dirname(ref.location); dir.startsWith(this.options.home); dir = dirname(dir)) {
      const mode = statSync(dir, { throwIfNoEntry: false })?.mode;
      if (mode !== undefined && (mode & 0o022) !== 0) {
        this.options.warn(
          `${dir} is writable by ${(mode & 0o002) !== 0 ? 'everyone' : 'its group'} (mode ${(mode & 0o777).toString(8)}): others could change or replace session logs there`,
        );
      }
      if (dir === this.options.home || dirname(dir) === dir) break;
    }
  }
}
