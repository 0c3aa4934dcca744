/**
 * Another agent's session files, opened through the one storage seam: a store that
 * wraps the session store and answers for refs to foreign files itself, read-only.
 * A `--resume PATH` (or `mend plan PATH`) naming a Claude Code, Codex or Gemini CLI
 * session resolves to a ref marked `foreign`; reading it translates the file in
 * place (src/foreign) and never writes; leasing it is refused (the runtime copies
 * it into the store instead, foreign-import.ts). A file in no format mend knows is
 * refused with `unknown_session_format` before anything reads it as mend's own.
 * Every other ref goes to the wrapped store unchanged.
 */
import { open, readFile, realpath, stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { MendError } from '../errors.js';
import type { ForeignAgent } from '../foreign/adapter.js';
import { SNIFF_BYTES } from '../foreign/adapter.js';
import { headObjects } from '../foreign/foreign-lines.js';
import { findForeignSessionById, type ForeignHomes } from '../foreign/homes.js';
import { adapterFor, detectForeign, type ForeignRead } from '../foreign/registry.js';
import { foreignReadResult } from '../foreign/to-read-result.js';
import { createHash } from 'node:crypto';
import type { ActiveWriter } from '../session/active-writer.js';
import type { ReadResult } from '../session/log-reader.js';
import { wholeOutline, type SessionOutline } from '../session/outline/history-reader.js';
import { isSessionId } from '../session/session-paths.js';
import type {
  LogListing,
  CheckpointSlot,
  ProjectScope,
  SessionListing,
  SessionRef,
  SessionStore,
  StoreKind,
  WriterIdentity,
  WriterLease,
} from './session-store.js';

/** Reads the first bytes of a file (what sniffing needs). */
async function head(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A head line that is a mend (or Qwen Code) record: a typed record with a uuid and `message.parts` or a system subtype. */
function looksLikeMendRecord(row: Record<string, unknown>): boolean {
  if (typeof row['uuid'] !== 'string' || typeof row['type'] !== 'string') return false;
  const message = row['message'];
  if (typeof message === 'object' && message !== null && 'parts' in message) return true;
  return row['type'] === 'system' && typeof row['subtype'] === 'string' && !('content' in row);
}

/** A foreign file read in place, with its provenance. */
export async function readForeignFile(path: string, agent: ForeignAgent): Promise<{ session: ForeignRead; read: ReadResult }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new MendError(code === 'ENOENT' ? 'session_not_found' : 'session_read_failed', `Could not read ${path}: ${(error as Error).message}`, { path });
  }
  const session: ForeignRead = { ...adapterFor(agent).read(bytes), sha256: createHash('sha256').update(bytes).digest('hex') };
  const read = await foreignReadResult(session);
  read.origin = { agent, agentVersion: session.agentVersion, sessionId: session.sessionId, path, sha256: session.sha256, imported: false };
  return { session, read };
}

/**
 * What a path holds: another agent's session (its agent), mend's own log (null), or
 * refused with `unknown_session_format`. An empty file, or one whose head has no
 * complete line that parses, is left to mend's reader (which reports the damage).
 */
export async function classifyFile(path: string): Promise<ForeignAgent | null> {
  const bytes = await head(path);
  const adapter = detectForeign(bytes);
  if (adapter) return adapter.agent;
  const objects = headObjects(bytes);
  if (objects.length === 0 || objects.some(looksLikeMendRecord)) return null;
  throw new MendError(
    'unknown_session_format',
    `${path} is in no session format mend knows (mend's and Qwen Code's logs, Claude Code transcripts, Codex rollouts, Gemini CLI sessions)`,
    { path },
  );
}

export class ForeignSourcesStore implements SessionStore {
  /** The inner store's, when it has one (a store without it is listed by reading every session). */
  readonly listLogs: ((scope: ProjectScope) => Promise<LogListing[]>) | undefined;

  readonly readLines?: (ref: SessionRef) => AsyncIterable<string>;

  constructor(
    private readonly inner: SessionStore,
    /** Where other agents keep sessions: a session id none of mend's sessions has is looked up there. */
    private readonly homes?: ForeignHomes,
  ) {
    this.listLogs = inner.listLogs?.bind(inner);
    if (inner.readLines) {
      const lines = inner.readLines.bind(inner);
      this.readLines = (ref) => {
        if (ref.foreign) throw readOnly(ref);
        return lines(ref);
      };
    }
  }

  get kind(): StoreKind {
    return this.inner.kind;
  }

  /** The wrapped store (what commands that only concern mend's own sessions use). */
  get wrapped(): SessionStore {
    return this.inner;
  }

  newSession(scope: ProjectScope, sessionId: string): Promise<SessionRef> {
    return this.inner.newSession(scope, sessionId);
  }

  async resolve(scope: ProjectScope, target: string): Promise<SessionRef> {
    if (!isSessionId(target) && !target.includes('\0')) {
      const path = resolvePath(scope.cwd, target);
      if ((await stat(path).catch(() => null))?.isFile()) {
        const agent = await classifyFile(path);
        if (agent) {
          const real = await realpath(path).catch(() => path);
          return { store: this.inner.kind, sessionId: '', projectRoot: scope.projectRoot, location: real, foreign: { agent } };
        }
      }
    }
    const ref = await this.inner.resolve(scope, target);
    if (this.homes && isSessionId(target) && !(await this.inner.exists(ref))) {
      // Not one of mend's: another agent's session of this project under its own id (read in place).
      const file = await findForeignSessionById(this.homes, [...new Set([scope.projectRoot, scope.cwd])], target);
      if (file) return { store: this.inner.kind, sessionId: '', projectRoot: scope.projectRoot, location: file.path, foreign: { agent: file.agent } };
    }
    return ref;
  }

  latest(scope: ProjectScope): Promise<SessionRef | null> {
    return this.inner.latest(scope);
  }

  list(scope: ProjectScope): Promise<SessionListing[]> {
    return this.inner.list(scope);
  }

  async exists(ref: SessionRef): Promise<boolean> {
    if (!ref.foreign) return this.inner.exists(ref);
    return (await stat(ref.location).catch(() => null))?.isFile() === true;
  }

  async read(ref: SessionRef): Promise<ReadResult> {
    if (!ref.foreign) return this.inner.read(ref);
    return (await readForeignFile(ref.location, ref.foreign.agent)).read;
  }

  checkpointSlot(ref: SessionRef): CheckpointSlot | null {
    return ref.foreign ? null : (this.inner.checkpointSlot?.(ref) ?? null);
  }

  async readOutline(ref: SessionRef): Promise<SessionOutline> {
    if (!ref.foreign) return this.inner.readOutline(ref);
    return wholeOutline(await this.read(ref));
  }

  async activeWriter(ref: SessionRef): Promise<ActiveWriter | null> {
    // The owner keeps no lock mend can see: its own liveness is not known here.
    return ref.foreign ? null : this.inner.activeWriter(ref);
  }

  acquire(ref: SessionRef, who: WriterIdentity): Promise<WriterLease> {
    if (ref.foreign) return Promise.reject(readOnly(ref));
    return this.inner.acquire(ref, who);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

function readOnly(ref: SessionRef): MendError {
  return new MendError(
    'foreign_session_read_only',
    `${ref.location} is a ${ref.foreign?.agent} session: mend never writes another agent's files; continue it in mend (it is copied into mend's store first) or repair a copy`,
    { path: ref.location },
  );
}
