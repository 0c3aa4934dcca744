/**
 * Opens the session a run works on: new, --session-id, --continue, --resume or a
 * fork, then (for resumed sessions) loads it and builds the recovery plan.
 *
 * A run that will write takes the single-writer lock BEFORE loading, so the plan
 * it shows and executes is the one built under the lock. A run that only
 * inspects takes no lock and writes nothing. Errors here come before anything is
 * written (the fork is the one exception, and it writes only its own new file).
 */
import { existsSync, statSync, unlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { MendError } from '../errors.js';
import { buildPlanForSession } from '../recovery/build-plan.js';
import type { SessionRecoveryPlan } from '../recovery/plan-types.js';
import type { LoadedSession } from '../session/conversation.js';
import { SessionWriter, type WriteFaultHook } from '../session/log-writer.js';
import { readSessionLog } from '../session/log-reader.js';
import { loadSession } from '../session/session-loader.js';
import { acquireSessionLock, processStartTime, type SessionLock } from '../session/session-lock.js';
import { findMostRecentSession, projectDir, resolveResumeTarget, sessionLogPath, isSessionId } from '../session/session-paths.js';
import type { ChatRecord } from '../session/records.js';
import type { RunOptions } from './args.js';
import { RecordBuilder, type RecordContext } from '../engine/record-builder.js';

export interface SessionEnv {
  home: string;
  projectRoot: string;
  cwd: string;
  pid: number;
  version: string;
  newId: () => string;
  now: () => string;
  faultHook?: WriteFaultHook | undefined;
}

export interface OpenedSession {
  sessionId: string;
  logPath: string;
  resumed: boolean;
  loaded: LoadedSession | null;
  plan: SessionRecoveryPlan | null;
  /** Present when the run may write. Appends are chained to the current leaf. */
  store: SessionStore | null;
  close(): void;
}

/** The writer (opened on first append, so a failed run on a new session leaves no file) plus the lock. */
export class SessionStore {
  private writer: SessionWriter | null = null;
  readonly builder: RecordBuilder;

  constructor(
    readonly logPath: string,
    private readonly create: boolean,
    readonly lock: SessionLock,
    ctx: RecordContext,
    leafUuid: string | null,
    private readonly faultHook: WriteFaultHook | undefined,
  ) {
    this.builder = new RecordBuilder(ctx, leafUuid);
  }

  async append(record: ChatRecord, opts: { durable: boolean }): Promise<void> {
    const creating = this.writer === null && this.create && !existsSync(this.logPath);
    this.writer ??= SessionWriter.open(this.logPath, {
      create: creating,
      ...(this.faultHook ? { faultHook: this.faultHook } : {}),
    });
    try {
      this.writer.append(record, { durable: opts.durable });
    } catch (error) {
      // A new session whose very first write failed (disk full) must not leave an empty
      // log behind: the same --session-id could never be used again.
      if (creating) this.discardEmptyLog();
      throw error;
    }
  }

  private discardEmptyLog(): void {
    this.writer?.close();
    this.writer = null;
    try {
      if (statSync(this.logPath).size === 0) unlinkSync(this.logPath);
    } catch {
      // Nothing to discard.
    }
  }

  close(): void {
    this.writer?.close();
    this.writer = null;
    this.lock.release();
  }
}

export async function loadAndPlan(
  logPath: string,
  fallbackSessionId: string,
  allowAutoContinue: boolean,
): Promise<{ loaded: LoadedSession; plan: SessionRecoveryPlan; sessionId: string }> {
  // The same loader every entrypoint uses, so the same file gives the same plan id everywhere.
  const loaded = await loadSession(logPath);
  const plan = buildPlanForSession(loaded, { allowAutoContinue });
  // New records need an id even in a log that names none (an empty file that is not named by a UUID).
  return { loaded, plan, sessionId: loaded.conversation.sessionId || fallbackSessionId };
}

function lockFor(path: string, env: SessionEnv): SessionLock {
  return acquireSessionLock(path, { pid: env.pid, startTime: processStartTime(env.pid) });
}

function contextFor(sessionId: string, env: SessionEnv): RecordContext {
  return { sessionId, cwd: env.cwd, version: env.version, newId: env.newId, now: env.now };
}

export async function openSession(options: RunOptions, env: SessionEnv, needsWrite: boolean): Promise<OpenedSession> {
  const chats = projectDir(env.home, env.projectRoot);
  const resuming = options.continue || options.resume !== undefined;

  if (!resuming) {
    const sessionId = options.sessionId ?? env.newId();
    if (!isSessionId(sessionId)) throw new MendError('usage', `--session-id must be a UUID: ${sessionId}`);
    const logPath = sessionLogPath(env.home, env.projectRoot, sessionId);
    if (existsSync(logPath)) throw new MendError('session_exists', `session ${sessionId} already exists`, { sessionId });
    if (!needsWrite) return { sessionId, logPath, resumed: false, loaded: null, plan: null, store: null, close() {} };
    const lock = lockFor(logPath, env);
    const store = new SessionStore(logPath, true, lock, contextFor(sessionId, env), null, env.faultHook);
    return { sessionId, logPath, resumed: false, loaded: null, plan: null, store, close: () => store.close() };
  }

  // Refused before touching disk when it is neither a UUID nor a .jsonl path.
  let sourcePath: string;
  if (options.resume !== undefined) {
    sourcePath = resolveResumeTarget(options.resume, { home: env.home, projectRoot: env.projectRoot, cwd: env.cwd });
  } else {
    const recent = await findMostRecentSession(chats);
    if (recent === null) {
      throw new MendError('no_session_to_continue', `no session to continue for ${env.projectRoot} (looked in ${chats})`);
    }
    sourcePath = recent;
  }
  if (!existsSync(sourcePath)) throw new MendError('session_not_found', `session not found: ${sourcePath}`, { path: sourcePath });
  const fileId = basename(sourcePath).replace(/\.jsonl$/, '');

  if (options.forkSession) return fork(sourcePath, fileId, options, env);

  const lock = needsWrite ? lockFor(sourcePath, env) : null;
  try {
    const { loaded, plan, sessionId } = await loadAndPlan(sourcePath, fileId, options.autoContinue);
    const store = lock
      ? new SessionStore(sourcePath, false, lock, contextFor(sessionId, env), loaded.conversation.leafUuid, env.faultHook)
      : null;
    return { sessionId, logPath: sourcePath, resumed: true, loaded, plan, store, close: () => store?.close() };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** Copies the source's records into a new session, then adds a `parent_session` record as the new leaf. */
async function fork(sourcePath: string, fileId: string, options: RunOptions, env: SessionEnv): Promise<OpenedSession> {
  const source = await readSessionLog(sourcePath);
  const sourceSessionId = source.sessionId ?? fileId;
  const sessionId = options.sessionId ?? env.newId();
  const logPath = sessionLogPath(env.home, env.projectRoot, sessionId);
  if (existsSync(logPath)) throw new MendError('session_exists', `session ${sessionId} already exists`, { sessionId });
  const lock = lockFor(logPath, env);
  try {
    const writer = SessionWriter.open(logPath, { create: true });
    try {
      for (const { record } of source.records) writer.append({ ...record, sessionId } as ChatRecord);
      const leaf = source.records.at(-1)?.record.uuid ?? null;
      const builder = new RecordBuilder(contextFor(sessionId, env), leaf);
      writer.append(builder.system('parent_session', { sourceSessionId, sourceLeafUuid: leaf, sourcePath }), { durable: true });
    } finally {
      writer.close();
    }
    const { loaded, plan } = await loadAndPlan(logPath, sessionId, options.autoContinue);
    const store = new SessionStore(logPath, false, lock, contextFor(sessionId, env), loaded.conversation.leafUuid, env.faultHook);
    return { sessionId, logPath, resumed: true, loaded, plan, store, close: () => store.close() };
  } catch (error) {
    lock.release();
    throw error;
  }
}
