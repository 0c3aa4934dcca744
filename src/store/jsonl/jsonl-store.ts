/**
 * The embedded default store: one JSONL log per session under
 * `<home>/projects/<sanitized project root>/chats/<sessionId>.jsonl`, Qwen Code's
 * layout, with a lock file per session for the single writer. For this store a
 * ref's `location` is the log's path.
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { MendError, errorCodeOf, errorMessageOf } from '../../errors.js';
import type { ActiveWriter } from '../../session/active-writer.js';
import { readSessionLog, type ReadResult } from '../../session/log-reader.js';
import type { WriteFaultHook } from '../../session/log-writer.js';
import { readSessionIndex } from '../../session/index-reader.js';
import type { RecordIndex } from '../../session/record-index.js';
import { acquireSessionLock, lockHolder, processStartTime } from '../../session/session-lock.js';
import { findMostRecentSession, isSessionId, listSessions, projectDir, resolveResumeTarget, sessionLogPath } from '../../session/session-paths.js';
import type { ProjectScope, SessionListing, SessionRef, SessionStore, WriterIdentity, WriterLease } from '../session-store.js';
import { JsonlLease } from './jsonl-lease.js';
import { jsonlLines } from './jsonl-lines.js';

export interface JsonlStoreOptions {
  /** MEND_HOME. */
  home: string;
  /** Crash injection for the reliability tests. */
  faultHook?: WriteFaultHook | undefined;
  /** ISO clock for lease `since`. */
  now?: () => string;
}

export class JsonlSessionStore implements SessionStore {
  readonly kind = 'jsonl' as const;

  constructor(private readonly options: JsonlStoreOptions) {}

  private refFor(path: string, projectRoot: string): SessionRef {
    const stem = basename(path, '.jsonl');
    return { store: 'jsonl', sessionId: isSessionId(stem) ? stem : '', projectRoot, location: path };
  }

  async newSession(scope: ProjectScope, sessionId: string): Promise<SessionRef> {
    const path = sessionLogPath(this.options.home, scope.projectRoot, sessionId);
    if (existsSync(path)) throw new MendError('session_exists', `session ${sessionId} already exists`, { sessionId });
    return { store: 'jsonl', sessionId, projectRoot: scope.projectRoot, location: path };
  }

  async resolve(scope: ProjectScope, target: string): Promise<SessionRef> {
    const path = resolveResumeTarget(target, { home: this.options.home, projectRoot: scope.projectRoot, cwd: scope.cwd });
    return this.refFor(path, scope.projectRoot);
  }

  async latest(scope: ProjectScope): Promise<SessionRef | null> {
    const path = await findMostRecentSession(projectDir(this.options.home, scope.projectRoot));
    return path === null ? null : this.refFor(path, scope.projectRoot);
  }

  async list(scope: ProjectScope): Promise<SessionListing[]> {
    const rows: SessionListing[] = [];
    for (const path of await listSessions(projectDir(this.options.home, scope.projectRoot))) {
      const ref = this.refFor(path, scope.projectRoot);
      try {
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

  async readIndex(ref: SessionRef): Promise<RecordIndex> {
    // The index pass keeps no records (index-reader.ts); only what RecordIndex names is returned.
    const { sessionId, entries, diagnostics } = await readSessionIndex(ref.location, isSessionId(ref.sessionId) ? { fileSessionId: ref.sessionId } : {});
    return { sessionId, entries, diagnostics };
  }

  async activeWriter(ref: SessionRef): Promise<ActiveWriter | null> {
    const owner = lockHolder(ref.location);
    if (!owner) return null;
    return { store: 'jsonl', host: owner.host ?? 'localhost', pid: owner.pid, since: owner.since ?? '' };
  }

  async acquire(ref: SessionRef, who: WriterIdentity): Promise<WriterLease> {
    const since = (this.options.now ?? (() => new Date().toISOString()))();
    const lock = acquireSessionLock(ref.location, { pid: who.pid, startTime: processStartTime(who.pid), host: who.host, since });
    return new JsonlLease(ref, { store: 'jsonl', host: who.host, pid: who.pid, since }, lock, this.options.faultHook);
  }

  async close(): Promise<void> {}
}
