/**
 * The sessions of one project, newest first, each with the recovery kind it
 * would resume as. Read-only: no lease, no writes. The CLI's `sessions list`
 * and the daemon's session list both show these rows.
 */
import { errorCodeOf, errorMessageOf } from '../errors.js';
import type { ProjectScope, SessionStore } from '../store/session-store.js';
import { loadPlanHead } from './session-runtime.js';

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
