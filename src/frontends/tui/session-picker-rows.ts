/**
 * `/resume` without an id: this project's sessions from the store's `list`, each
 * with the recovery kind and cause it would resume as (the same loader and
 * planner every entrypoint uses), its size, age and whether a process holds it.
 * Read-only: no lease, no writes.
 */
import { everyAgent, listSessions } from '../../runtime/list-sessions.js';
import { loadAndPlan, type RuntimeDeps } from '../../runtime/session-runtime.js';

export interface PickerRow {
  /** What `/resume` passes on: the session id. */
  target: string;
  sessionId: string;
  kind: string;
  cause: string;
  records: number;
  /** Milliseconds since the last record, when known. */
  ageMs: number | null;
  firstPrompt: string | null;
  running: boolean;
  current: boolean;
  error?: string;
  /** Whose session: mend, or another agent's read in place (claude, codex, gemini), resumed by its path. */
  agent: string;
}

export async function loadPickerRows(deps: RuntimeDeps, currentSessionId: string): Promise<PickerRow[]> {
  const rows: PickerRow[] = [];
  const now = Date.parse(deps.now());
  for (const entry of await deps.store.list(deps.scope)) {
    const base = {
      // A log that names no session id is resumed by its location.
      target: entry.ref.sessionId || entry.ref.location,
      sessionId: entry.ref.sessionId,
      records: entry.records,
      ageMs: entry.lastUpdate ? Math.max(0, now - Date.parse(entry.lastUpdate)) : null,
      firstPrompt: entry.firstPrompt,
      current: entry.ref.sessionId === currentSessionId,
      agent: 'mend',
    };
    if (entry.error) {
      rows.push({ ...base, kind: 'unreadable', cause: entry.error.code, running: false, error: entry.error.message });
      continue;
    }
    const holder = await deps.store.activeWriter(entry.ref);
    const { plan } = await loadAndPlan(deps.store, entry.ref, false, holder);
    rows.push({ ...base, kind: plan.kind, cause: plan.cause, running: holder !== null && !base.current });
  }
  // Other agents' sessions of this project, planned in place (never written until continued in mend).
  for (const row of await listSessions(deps.store, deps.scope, { ...everyAgent(deps.foreignHomes), mend: false })) {
    rows.push({
      target: row.path,
      sessionId: row.id,
      kind: row.error ? 'unreadable' : row.kind,
      cause: row.error ? row.error.code : row.cause,
      records: row.records,
      ageMs: row.lastUpdate ? Math.max(0, now - Date.parse(row.lastUpdate)) : null,
      firstPrompt: row.firstPrompt,
      running: false,
      current: false,
      agent: row.agent ?? 'mend',
      ...(row.error ? { error: row.error.message } : {}),
    });
  }
  return rows;
}

export function ageText(ms: number | null): string {
  if (ms === null) return '?';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86_400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}
