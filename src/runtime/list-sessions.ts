/**
 * The sessions of one project, newest first, each with the recovery kind it
 * would resume as. Read-only: no lease, no writes. The CLI's `sessions list`
 * and the daemon's session list both show these rows.
 */
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { FOREIGN_AGENTS, type ForeignAgent } from '../foreign/adapter.js';
import { listForeignSessionFiles, type ForeignHomes } from '../foreign/homes.js';
import type { ProjectScope, SessionStore } from '../store/session-store.js';
import { loadAndPlan, loadPlanHead } from './session-runtime.js';

export interface ProjectSessionRow {
  id: string;
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
export async function listSessions(store: SessionStore, scope: ProjectScope, which: ListScope = OWN_ONLY): Promise<ProjectSessionRow[]> {
  const rows = which.mend ? await listProjectSessions(store, scope) : [];
  if (which.agents.length === 0 || !which.homes) return rows;
  const dirs = [...new Set([scope.projectRoot, scope.cwd])];
  for (const file of await listForeignSessionFiles(which.homes, dirs, which.agents)) {
    const base = { path: file.path, agent: file.agent, size: file.size, started: null, lastUpdate: new Date(file.mtimeMs).toISOString(), firstPrompt: null };
    try {
      const ref = await store.resolve(scope, file.path);
      // A foreign file is read whole either way (its reader keeps no byte ranges): the records give the first prompt.
      const { loaded, plan } = await loadAndPlan(store, ref, false, null);
      const first = loaded.conversation.records.find((r) => r.type === 'user');
      const text = first?.type === 'user' ? first.message.parts.find((p) => typeof p.text === 'string')?.text : undefined;
      rows.push({
        ...base,
        id: loaded.conversation.origin?.sessionId ?? loaded.conversation.sessionId,
        agentVersion: loaded.conversation.origin?.agentVersion ?? null,
        firstPrompt: text === undefined ? null : text.slice(0, 200),
        records: loaded.conversation.totalRecords,
        kind: plan.kind,
        cause: plan.cause,
        planId: plan.planId,
        canContinue: plan.canContinue,
      });
    } catch (error) {
      rows.push({
        ...base,
        id: '',
        records: 0,
        kind: '',
        cause: '',
        planId: '',
        canContinue: false,
        error: { code: errorCodeOf(error), message: errorMessageOf(error) },
      });
    }
  }
  return rows;
}

export async function listProjectSessions(store: SessionStore, scope: ProjectScope): Promise<ProjectSessionRow[]> {
  const rows: ProjectSessionRow[] = [];
  for (const entry of await store.list(scope)) {
    const base = { path: entry.ref.location, started: entry.started, lastUpdate: entry.lastUpdate, firstPrompt: entry.firstPrompt };
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
