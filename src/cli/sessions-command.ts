/**
 * `mend sessions list [--json]`: the sessions of this project, newest first, with
 * the recovery kind each would resume as. Read-only: no lease, no writes.
 */
import { MendError, errorCodeOf, errorMessageOf, type ErrorCode } from '../errors.js';
import { loadAndPlan, type RuntimeDeps } from '../runtime/session-runtime.js';
import { ExitCode, exitCodeFor } from '../stream/exit-codes.js';
import type { CommandIo } from './plan-command.js';

export interface SessionListing {
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
}

export async function listProjectSessions(deps: RuntimeDeps): Promise<SessionListing[]> {
  const rows: SessionListing[] = [];
  for (const entry of await deps.store.list(deps.scope)) {
    if (entry.error) throw new MendError(entry.error.code as ErrorCode, entry.error.message);
    // A session another process is writing right now is `running`, not crashed.
    const { loaded, plan } = await loadAndPlan(deps.store, entry.ref, false, await deps.store.activeWriter(entry.ref));
    rows.push({
      id: loaded.conversation.sessionId,
      path: entry.ref.location,
      started: entry.started,
      lastUpdate: entry.lastUpdate,
      records: loaded.conversation.totalRecords,
      firstPrompt: entry.firstPrompt,
      kind: plan.kind,
      cause: plan.cause,
      planId: plan.planId,
    });
  }
  return rows;
}

export async function sessionsListCommand(args: { json: boolean }, io: CommandIo): Promise<number> {
  try {
    const rows = await listProjectSessions(io.runtime);
    if (args.json) {
      io.stdout.write(`${JSON.stringify(rows)}\n`);
    } else if (rows.length === 0) {
      io.stdout.write('no sessions for this project\n');
    } else {
      for (const r of rows) {
        const prompt = (r.firstPrompt ?? '').replace(/\s+/g, ' ').slice(0, 60);
        io.stdout.write(`${r.id}  ${r.lastUpdate ?? '-'}  ${String(r.records).padStart(5)} records  ${r.kind.padEnd(18)}  ${r.cause.padEnd(7)}  ${prompt}\n`);
      }
    }
    return ExitCode.success;
  } catch (error) {
    const code = errorCodeOf(error);
    io.stderr.write(`mend: error [${code}]: ${errorMessageOf(error)}\n`);
    return exitCodeFor(code);
  }
}
