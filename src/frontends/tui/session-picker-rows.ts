/**
 * `/resume` without an id: this project's sessions (src/runtime/list-sessions.ts), each
 * with the recovery kind and cause it would resume as (the same loader and
 * planner every entrypoint uses), its size, age and whether a process holds it.
 * Read-only: no lease, no writes.
 */
import { everyAgent, listProjectSessions, listSessions } from '../../runtime/list-sessions.js';
import type { RuntimeDeps } from '../../runtime/session-runtime.js';

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
  // Each planned through its plan checkpoint: a picker opened again reads no history.
  for (const row of await listProjectSessions(deps.store, deps.scope)) {
    const base = {
      // A log that names no session id is resumed by its location.
      target: row.target ?? row.path,
      sessionId: row.target === row.path ? '' : (row.target ?? ''),
      records: row.records,
      ageMs: row.lastUpdate ? Math.max(0, now - Date.parse(row.lastUpdate)) : null,
      firstPrompt: row.firstPrompt,
      current: row.target === currentSessionId,
      agent: 'mend',
    };
    if (row.error) {
      rows.push({ ...base, kind: 'unreadable', cause: row.error.code, running: false, error: row.error.message });
      continue;
    }
    // A live holder makes the plan's cause `running`.
    rows.push({ ...base, kind: row.kind, cause: row.cause, running: row.cause === 'running' && !base.current });
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
