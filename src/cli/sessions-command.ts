/**
 * `mend sessions list [--json]`: the sessions of this project, newest first, with
 * the recovery kind each would resume as. Read-only: no lease, no writes.
 */
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { listProjectSessions, type ProjectSessionRow } from '../runtime/list-sessions.js';
import type { RuntimeDeps } from '../runtime/session-runtime.js';
import { ExitCode, exitCodeFor } from '../wire/exit-codes.js';
import { stripControlSequences } from '../frontends/shared/output-sink.js';
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
      // Session content comes from elsewhere too (imports, Qwen Code logs): shown, never interpreted.
      const print = (line: string) => io.stdout.write(`${stripControlSequences(line)}\n`);
      for (const r of rows) {
        if (r.error) {
          print(`${r.id || r.path}  unreadable: [${r.error.code}] ${r.error.message}`);
          continue;
        }
        const prompt = stripControlSequences(r.firstPrompt ?? '')
          .replace(/\s+/g, ' ')
          .slice(0, 60);
        print(
          `${r.id}  ${r.lastUpdate ?? '-'}  ${String(r.records).padStart(5)} ${r.records === 1 ? 'record ' : 'records'}  ${r.kind.padEnd(18)}  ${r.cause.padEnd(7)}  ${prompt}`,
        );
      }
    }
    return ExitCode.success;
  } catch (error) {
    const code = errorCodeOf(error);
    io.stderr.write(`mend: error [${code}]: ${stripControlSequences(errorMessageOf(error))}\n`);
    return exitCodeFor(code);
  }
}
