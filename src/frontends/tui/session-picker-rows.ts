/**
 * `/resume` without an id: this project's sessions from the store's `list`, each
 * with the recovery kind and cause it would resume as (the same loader and
 * planner every entrypoint uses), its size, age and whether a process holds it.
 * Read-only: no lease, no writes.
 */
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
    };
    if (entry.error) {
      rows.push({ ...base, kind: 'unreadable', cause: entry.error.code, running: false, error: entry.error.message });
      continue;
    }
    const holder = await deps.store.activeWriter(entry.ref);
    const { plan } = await loadAndPlan(deps.store, entry.ref, false, holder);
    rows.push({ ...base, kind: plan.kind, cause: plan.cause, running: holder !== null && !base.current });
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
