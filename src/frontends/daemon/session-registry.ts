/**
 * The sessions one daemon has open: at most one SessionRuntime per session id
 * in the process (so one writer, the runtime's lease), shared by every client
 * that attaches. Opening is deduplicated: two loads of one session at once
 * attach to the same runtime. Sessions live only under the daemon's project
 * roots; a cwd outside them is refused.
 */
import { realpathSync, statSync } from 'node:fs';
import { sep } from 'node:path';
import { MendError, isMendError } from '../../errors.js';
import { everyAgent, listSessions, type ProjectSessionRow } from '../../runtime/list-sessions.js';
import { runtimeSettingsFrom, type HostOptions } from '../../runtime/runtime-settings.js';
import { SessionRuntime, type RuntimeDeps } from '../../runtime/session-runtime.js';
import { mergeServerSpecs, type McpServerSpec } from '../../tools/mcp/mcp-config.js';
import { approvalModeFromAlias, type ApprovalMode } from '../../wire/approval-modes.js';
import { DaemonSession, type DaemonSessionDeps } from './daemon-session.js';

export interface RegistryDeps {
  /** Store, identity, ids, clocks, provider and the process-wide stop signal; scope and cwd are set per session. */
  runtime: RuntimeDeps;
  /** Real paths of the project roots sessions may live under. */
  roots: string[];
  /** The command line of `mend serve`: the defaults of every session it opens. */
  options: HostOptions;
  /** Servers of the daemon's own configuration (the settings file, --mcp-config) that could not be read: listed failed in every session. */
  mcpFailed?: readonly { name: string; error: string }[] | undefined;
  session: Omit<DaemonSessionDeps, 'runtime'>;
}

export type OpenKind = 'create' | 'load' | 'resume';

export function isWithin(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

export function approvalModeOf(name: string | undefined, fallback: ApprovalMode): ApprovalMode {
  if (name === undefined) return fallback;
  const mode = approvalModeFromAlias(name);
  if (!mode) throw new MendError('invalid_request', `unknown approval mode ${JSON.stringify(name)}; mend's modes: default, auto-edit, yolo, plan`);
  return mode;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, DaemonSession>();
  private readonly opening = new Map<string, Promise<DaemonSession>>();
  private closed = false;

  constructor(private readonly deps: RegistryDeps) {}

  get size(): number {
    return this.sessions.size;
  }

  get(sessionId: string): DaemonSession | undefined {
    return this.sessions.get(sessionId);
  }

  require(sessionId: string): DaemonSession {
    const session = this.sessions.get(sessionId);
    if (!session || session.closed) throw new MendError('session_not_found', `session ${sessionId} is not open in this daemon: load or resume it first`);
    return session;
  }

  all(): DaemonSession[] {
    return [...this.sessions.values()];
  }

  /** The real path of a requested cwd (default: the first root), refused outside the roots. */
  resolveCwd(cwd: string | undefined): string {
    const wanted = cwd ?? this.deps.roots[0]!;
    let real: string;
    try {
      real = realpathSync(wanted);
      if (!statSync(real).isDirectory()) throw new Error('not a directory');
    } catch {
      throw new MendError('usage', `cwd is not an existing directory: ${wanted}`);
    }
    if (!this.deps.roots.some((root) => isWithin(root, real))) {
      throw new MendError('outside_roots', `cwd ${real} is outside the daemon's project roots (${this.deps.roots.join(', ')})`);
    }
    return real;
  }

  /**
   * Opens a session, or attaches to it when it is open already (`attached`).
   * create: a new session (an open one with that id is attached to; one that
   * exists on disk is refused). load / resume: an existing one; when another
   * process holds its writer lease it is opened read-only (turns are refused with
   * session_locked until that holder is gone: the runtime re-checks it on each request).
   */
  async open(
    kind: OpenKind,
    request: { sessionId?: string | undefined; cwd?: string | undefined; approvalMode?: string | undefined; mcpServers?: readonly McpServerSpec[] | undefined },
  ): Promise<{ session: DaemonSession; attached: boolean }> {
    if (this.closed) throw new MendError('server_closing', 'the daemon is shutting down');
    const cwd = this.resolveCwd(request.cwd);
    const approvalMode = approvalModeOf(request.approvalMode, this.deps.options.approvalMode);
    const sessionId = request.sessionId ?? (kind === 'create' ? this.deps.runtime.newId() : undefined);
    if (sessionId === undefined) throw new MendError('invalid_session_id', 'a session id is needed');

    const pending = this.opening.get(sessionId);
    const existing = this.sessions.get(sessionId) ?? (pending ? await pending.catch(() => undefined) : undefined);
    if (existing && !existing.closed) {
      if (existing.workspaceCwd !== cwd) {
        throw new MendError('session_exists', `session ${sessionId} is open in this daemon for ${existing.workspaceCwd}, not ${cwd}`);
      }
      // Open read-only because another process held it: the runtime re-checks that holder on
      // every request (its summary, a prompt, a continue), so a holder gone since is noticed there.
      if (request.approvalMode !== undefined) void existing.runtime.setApprovalMode(approvalMode);
      // A client attaching with servers: those the session does not run yet start now (a name it has keeps its server).
      if (request.mcpServers?.length) existing.runtime.addMcpServers(request.mcpServers);
      return { session: existing, attached: true };
    }

    const opening = this.openRuntime(kind, sessionId, cwd, approvalMode, request.mcpServers ?? []);
    this.opening.set(sessionId, opening);
    try {
      const session = await opening;
      this.sessions.set(sessionId, session);
      return { session, attached: false };
    } finally {
      this.opening.delete(sessionId);
    }
  }

  private async openRuntime(
    kind: OpenKind,
    sessionId: string,
    cwd: string,
    approvalMode: ApprovalMode,
    mcpServers: readonly McpServerSpec[],
  ): Promise<DaemonSession> {
    const stop = new AbortController();
    const base = this.deps.runtime;
    const deps: RuntimeDeps = {
      ...base,
      scope: { projectRoot: cwd, cwd },
      cwd,
      signal: base.signal ? AbortSignal.any([base.signal, stop.signal]) : stop.signal,
    };
    // Another process writing it: shown read-only (recovery, replay); the runtime takes the lease on a turn once that holder is gone.
    const runtime = await SessionRuntime.openForHost(deps, {
      target: kind === 'create' ? { type: 'new', sessionId } : { type: 'resume', target: sessionId },
      access: { mode: 'write_or_read_only' },
      // The daemon's servers (settings file, --mcp-config) and the request's, the request's winning by name (as ACP's session/new).
      settings: runtimeSettingsFrom({
        host: { ...this.deps.options, mcpServers: mergeServerSpecs([this.deps.options.mcpServers ?? [], mcpServers]) },
        session: { approvalMode },
      }),
    });
    for (const failed of this.deps.mcpFailed ?? []) runtime.addFailedMcpServer(failed.name, failed.error);
    return new DaemonSession(runtime, cwd, stop, { ...this.deps.session, runtime: { newId: base.newId, cwd, version: base.version } });
  }

  /** Closes one session (DELETE); false when it is not open. */
  async close(sessionId: string): Promise<boolean> {
    const session = this.sessions.get(sessionId);
    if (!session) return false;
    try {
      await session.close('client_close');
    } finally {
      this.sessions.delete(sessionId);
    }
    return true;
  }

  /** Shutdown: no more opens; every session finishes (turns were stopped by the process-wide signal) and closes. */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.opening.values()]);
    await Promise.allSettled(this.all().map((s) => s.close('server_shutdown')));
  }

  /** The sessions of one project on disk, with their recovery kind; open ones say whether a turn runs. */
  async list(cwd: string): Promise<Array<ProjectSessionRow & { open: DaemonSession | undefined }>> {
    const real = this.resolveCwd(cwd);
    // Other agents' sessions of the project too, read in place (loadable by their own session id).
    const rows = await listSessions(this.deps.runtime.store, { projectRoot: real, cwd: real }, everyAgent(this.deps.runtime.foreignHomes));
    return rows.map((row) => ({ ...row, open: this.sessions.get(row.id) }));
  }
}
