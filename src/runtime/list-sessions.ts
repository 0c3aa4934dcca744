/**
 * The sessions of one project, newest first, each with the recovery kind it
 * would resume as. Read-only: no lease, no writes. The CLI's `sessions list`
 * and the daemon's session list both show these rows.
 */
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { FOREIGN_AGENTS, type ForeignAgent } from '../foreign/adapter.js';
import { listForeignSessionFiles, type ForeignHomes } from '../foreign/homes.js';
import type { ProjectScope, SessionRef, SessionStore } from '../store/session-store.js';
import { loadPlanAndFacts } from './load-and-plan.js';
import { loadAndPlan, loadPlanHead } from './session-runtime.js';

export interface ProjectSessionRow {
  id: string;
  /**
   * What opens this session in the store it was listed from: the store's own id for it (a
   * JSONL log's file name), or its location when it has none. Not set for another agent's file.
   */
  target?: string;
  path: string;
  started: string | null;
  lastUpdate: string | null;
  records: number;
  firstPrompt: string | null;
  kind: string;
  /** crash, aborted, failed, running (another process holds it), none, unknown. */
  cause: string;
  planId: string;
  canContinue: boolean;
  /** Present when the session could not be read or planned; kind and planId are then empty. */
  error?: { code: string; message: string };
  /** Set for another agent's session file (read in place): claude, codex or gemini. */
  agent?: ForeignAgent;
  agentVersion?: string | null;
  /** The session file's size in bytes (another agent's session). */
  size?: number;
}

/** Which sessions a list shows: mend's own (the store's), and other agents' from their homes. */
export interface ListScope {
  mend: boolean;
  agents: readonly ForeignAgent[];
  homes?: ForeignHomes | undefined;
}

const OWN_ONLY: ListScope = { mend: true, agents: [] };

/** Every agent's sessions when the homes are known (what the session pickers of the front ends show). */
export function everyAgent(homes: ForeignHomes | undefined): ListScope {
  return { mend: true, agents: homes ? FOREIGN_AGENTS : [], homes };
}

/**
 * The project's sessions. Another agent's sessions are planned from their files in
 * place, through the same store seam (`resolve` by path), so a row's plan id is the one
 * `mend plan PATH` gives; nothing is written.
 */
export async function listSessions(
  store: SessionStore,
  scope: ProjectScope,
  which: ListScope = OWN_ONLY,
  options: ListOptions = {},
): Promise<ProjectSessionRow[]> {
  return (await listSessionPage(store, scope, which, options)).rows;
}

/**
 * The rows of one page of the listing (mend's own sessions first, then other agents'), and
 * how many rows the whole listing has: only the page's sessions are read and planned.
 */
export async function listSessionPage(
  store: SessionStore,
  scope: ProjectScope,
  which: ListScope = OWN_ONLY,
  options: ListOptions = {},
): Promise<{ rows: ProjectSessionRow[]; total: number }> {
  const own = which.mend ? await listProjectSessionPage(store, scope, options) : { rows: [], total: 0 };
  if (which.agents.length === 0 || !which.homes) return own;
  const dirs = [...new Set([scope.projectRoot, scope.cwd])];
  const files = await listForeignSessionFiles(which.homes, dirs, which.agents);
  const page = options.page;
  // The page's part of the foreign rows: they follow the own ones.
  const from = page ? Math.max(0, page.start - own.total) : 0;
  const to = page ? Math.max(0, page.start + page.size - own.total) : files.length;
  const rows = [...own.rows];
  for (const file of files.slice(from, to)) {
    const row = await foreignRow(store, scope, file);
    rows.push(row);
    options.onRow?.(row);
  }
  return { rows, total: own.total + files.length };
}

/** Another agent's session file, planned in place through the store seam (`resolve` by path), so its plan id is the one `mend plan PATH` gives. */
async function foreignRow(
  store: SessionStore,
  scope: ProjectScope,
  file: Awaited<ReturnType<typeof listForeignSessionFiles>>[number],
): Promise<ProjectSessionRow> {
  const base = { path: file.path, agent: file.agent, size: file.size, started: null, lastUpdate: new Date(file.mtimeMs).toISOString(), firstPrompt: null };
  try {
    const ref = await store.resolve(scope, file.path);
    // A foreign file is read whole either way (its reader keeps no byte ranges): the records give the first prompt.
    const { loaded, plan } = await loadAndPlan(store, ref, false, null);
    const first = loaded.conversation.records.find((r) => r.type === 'user');
    const text = first?.type === 'user' ? first.message.parts.find((p) => typeof p.text === 'string')?.text : undefined;
    return {
      ...base,
      id: loaded.conversation.origin?.sessionId ?? loaded.conversation.sessionId,
      agentVersion: loaded.conversation.origin?.agentVersion ?? null,
      firstPrompt: text === undefined ? null : text.slice(0, 200),
      records: loaded.conversation.totalRecords,
      kind: plan.kind,
      cause: plan.cause,
      planId: plan.planId,
      canContinue: plan.canContinue,
    };
  } catch (error) {
    return {
      ...base,
      id: '',
      records: 0,
      kind: '',
      cause: '',
      planId: '',
      canContinue: false,
      error: { code: errorCodeOf(error), message: errorMessageOf(error) },
    };
  }
}

/** A slice of a listing: rows start..start+size-1 (the daemon's pages). */
export interface ListPage {
  start: number;
  size: number;
}

export interface ListOptions {
  /** Only these rows are read and planned; the total is counted all the same. */
  page?: ListPage;
  /** Each row as soon as it is planned, in listing order (a front end shows the first before all are read). */
  onRow?: (row: ProjectSessionRow) => void;
}

export async function listProjectSessions(store: SessionStore, scope: ProjectScope, options: ListOptions = {}): Promise<ProjectSessionRow[]> {
  return (await listProjectSessionPage(store, scope, options)).rows;
}

/**
 * The project's own sessions, newest first, with the total. A store that can list its logs
 * without reading them (listLogs) has each session planned on its own, through its plan
 * checkpoint (a warm listing reads no history), and only the page's; else every session
 * is read for the listing (SessionStore.list) and then planned.
 */
export async function listProjectSessionPage(
  store: SessionStore,
  scope: ProjectScope,
  options: ListOptions = {},
): Promise<{ rows: ProjectSessionRow[]; total: number }> {
  if (store.listLogs === undefined) {
    const all = await listReadSessions(store, scope);
    const rows = options.page ? all.slice(options.page.start, options.page.start + options.page.size) : all;
    for (const row of rows) options.onRow?.(row);
    return { rows, total: all.length };
  }
  const logs = await store.listLogs(scope);
  const picked = options.page ? logs.slice(options.page.start, options.page.start + options.page.size) : logs;
  // Several sessions at once (their reads overlap), rows handed on in listing order.
  const rows = await inOrder(picked, LIST_CONCURRENCY, (log) => logRow(store, log.ref, log.error), options.onRow);
  return { rows, total: logs.length };
}

/** How many sessions a listing reads and plans at once. */
const LIST_CONCURRENCY = 16;

/** fn over items with at most `limit` running at once; results (and `each`) in item order. */
async function inOrder<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>, each?: (result: R) => void): Promise<R[]> {
  const results = new Array<Promise<R>>(items.length);
  const out: R[] = [];
  let started = 0;
  const start = (): void => {
    if (started < items.length) {
      const i = started++;
      results[i] = fn(items[i]!);
    }
  };
  for (let i = 0; i < limit; i++) start();
  for (let i = 0; i < items.length; i++) {
    const result = await results[i]!;
    start();
    out.push(result);
    each?.(result);
  }
  return out;
}

/** One session's row: its plan (never a lease, never a write) and its listing facts. */
async function logRow(store: SessionStore, ref: SessionRef, listError: { code: string; message: string } | undefined): Promise<ProjectSessionRow> {
  const failed = (error: { code: string; message: string }): ProjectSessionRow => ({
    path: ref.location,
    target: ref.sessionId || ref.location,
    started: null,
    lastUpdate: null,
    firstPrompt: null,
    id: ref.sessionId,
    records: 0,
    kind: '',
    cause: '',
    planId: '',
    canContinue: false,
    error,
  });
  if (listError) return failed(listError);
  try {
    // A session another process is writing right now is `running`, not crashed.
    const { planned, facts } = await loadPlanAndFacts(store, ref, false, await store.activeWriter(ref));
    const { loaded, plan } = planned;
    return {
      path: ref.location,
      target: ref.sessionId || ref.location,
      started: facts.started,
      lastUpdate: facts.lastUpdate,
      firstPrompt: facts.firstPrompt,
      id: loaded.conversation.sessionId,
      records: facts.records,
      kind: plan.kind,
      cause: plan.cause,
      planId: plan.planId,
      canContinue: plan.canContinue,
    };
  } catch (error) {
    return failed({ code: errorCodeOf(error), message: errorMessageOf(error) });
  }
}

/** The listing of a store that reads every session for it (SessionStore.list), each then planned. */
async function listReadSessions(store: SessionStore, scope: ProjectScope): Promise<ProjectSessionRow[]> {
  const rows: ProjectSessionRow[] = [];
  for (const entry of await store.list(scope)) {
    const base = {
      path: entry.ref.location,
      target: entry.ref.sessionId || entry.ref.location,
      started: entry.started,
      lastUpdate: entry.lastUpdate,
      firstPrompt: entry.firstPrompt,
    };
    const failed = (error: { code: string; message: string }): ProjectSessionRow => ({
      ...base,
      id: entry.ref.sessionId,
      records: entry.records,
      kind: '',
      cause: '',
      planId: '',
      canContinue: false,
      error,
    });
    if (entry.error) {
      rows.push(failed(entry.error));
      continue;
    }
    try {
      // A session another process is writing right now is `running`, not crashed.
      // Only the plan is shown: planned from the outline, no history read.
      const { loaded, plan } = await loadPlanHead(store, entry.ref, false, await store.activeWriter(entry.ref));
      rows.push({
        ...base,
        id: loaded.conversation.sessionId,
        records: loaded.conversation.totalRecords,
        kind: plan.kind,
        cause: plan.cause,
        planId: plan.planId,
        canContinue: plan.canContinue,
      });
    } catch (error) {
      rows.push(failed({ code: errorCodeOf(error), message: errorMessageOf(error) }));
    }
  }
  return rows;
}
