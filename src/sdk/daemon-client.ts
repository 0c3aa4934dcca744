/**
 * mend's daemon-backed SDK: `connect({url, token})` to a running `mend serve`,
 * then `client.query(...)` with the surface of the process-backed `query()`:
 * the session's messages as an async iterable (the same stream-json messages),
 * `recovery`, `continueLastTurn({planId})`, `getRecoveryPlan()`, `interrupt()`
 * and `canUseTool`. The transport is HTTP + server-sent events.
 */
import { CapabilitiesSchema, SessionListAnswerSchema, type Capabilities, type SessionListAnswer } from '../wire/daemon-api.js';
import { DaemonHttp, type DaemonConnection } from './daemon-http.js';
import { DaemonTransport, type DaemonSessionOptions } from './daemon-transport.js';
import { Query } from './query.js';
import type { CanUseTool, Prompt } from './types.js';

export interface DaemonQueryOptions extends DaemonSessionOptions {
  /** When given, permission requests of the session reach this callback (the first answer of any client wins). */
  canUseTool?: CanUseTool;
  /** Aborting detaches from the session; the iterator then throws an AbortError (MendAbortError). */
  abortSignal?: AbortSignal;
}

export interface DaemonQueryParams {
  prompt?: Prompt;
  options?: DaemonQueryOptions;
}

export class MendDaemonClient {
  readonly http: DaemonHttp;

  constructor(connection: DaemonConnection) {
    this.http = new DaemonHttp(connection);
  }

  /** A session of the daemon, driven like a process-backed query. Closing it detaches; `closeSession` ends it on the daemon. */
  query({ prompt, options = {} }: DaemonQueryParams = {}): Query {
    const { canUseTool, abortSignal, ...session } = options;
    return new Query(new DaemonTransport(this.http, session), { prompt, canUseTool, abortSignal });
  }

  async health(): Promise<{ status: string }> {
    return (await this.http.request<{ status: string }>('/health')).body;
  }

  async capabilities(): Promise<Capabilities> {
    return CapabilitiesSchema.parse((await this.http.request('/capabilities')).body);
  }

  /** The sessions of a project folder on the daemon, newest first, with the recovery kind each would resume as. */
  async listSessions(cwd: string, page: { size?: number; cursor?: string } = {}): Promise<SessionListAnswer> {
    const query = new URLSearchParams({ size: String(page.size ?? 20), ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) });
    return SessionListAnswerSchema.parse((await this.http.request(`/workspace/${encodeURIComponent(cwd)}/sessions?${query}`)).body);
  }

  /** Ends a session on the daemon (a running turn is recorded as aborted); false when it was not open. */
  async closeSession(sessionId: string): Promise<boolean> {
    const { status } = await this.http.request(`/session/${encodeURIComponent(sessionId)}`, { method: 'DELETE', accept: [404] });
    return status === 204;
  }
}

export function connect(connection: DaemonConnection): MendDaemonClient {
  return new MendDaemonClient(connection);
}
