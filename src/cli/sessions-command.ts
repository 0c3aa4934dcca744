/**
 * `mend sessions list [--json]`: the sessions of this project, newest first, with
 * the recovery kind each would resume as. Read-only: no lease, no writes.
 */
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { listProjectSessions, type ProjectSessionRow } from '../runtime/list-sessions.js';
import type { RuntimeDeps } from '../runtime/session-runtime.js';
import { ExitCode, exitCodeFor } from '../wire/exit-codes.js';
import type { CommandIo } from './plan-command.js';

export type SessionListing = Pick<
  ProjectSessionRow,
  'id' | 'path' | 'started' | 'lastUpdate' | 'records' | 'firstPrompt' | 'kind' | 'cause' | 'planId' | 'error'
>;

/** The rows `sessions list` prints. One unreadable session does not hide the others: it is listed with its error. */
async function listRows(deps: RuntimeDeps): Promise<SessionListing[]> {
  const rows = await listProjectSessions(deps.store, deps.scope);
  return rows.map(({ id, path, started, lastUpdate, records, firstPrompt, kind, cause, planId, error }) => ({
    id,
    path,
    started,
    lastUpdate,
    records,
    firstPrompt,
    kind,
    cause,
    planId,
    ...(error ? { error } : {}),
  }));
}

export async function sessionsListCommand(args: { json: boolean }, io: CommandIo): Promise<number> {
  try {
    const rows = await listRows(io.runtime);
    if (args.json) {
      io.stdout.write(`${JSON.stringify(rows)}\n`);
    } else if (rows.length === 0) {
      io.stdout.write('no sessions for this project\n');
    } else {
      for (const r of rows) {
        if (r.error) {
          io.stdout.write(`${r.id || r.path}  unreadable: [${r.error.code}] ${r.error.message}\n`);
          continue;
        }
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
