/**
 * `mend sessions list [--json]`: the sessions of this project, newest first, with
 * the recovery kind each would resume as. Read-only: no lease, no writes.
 */
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { statSync } from 'node:fs';
import { FOREIGN_AGENTS } from '../foreign/adapter.js';
import { listSessions, type ListScope, type ProjectSessionRow } from '../runtime/list-sessions.js';
import type { SessionsAgent } from './args.js';
import type { RuntimeDeps } from '../runtime/session-runtime.js';
import { ExitCode, exitCodeFor } from '../wire/exit-codes.js';
import { stripControlSequences } from '../frontends/shared/output-sink.js';
import type { CommandIo } from './plan-command.js';

export type SessionListing = Pick<
  ProjectSessionRow,
  'id' | 'path' | 'started' | 'lastUpdate' | 'records' | 'firstPrompt' | 'kind' | 'cause' | 'planId' | 'error' | 'agentVersion'
> & { agent?: string; size?: number | null };

/**
 * The rows `sessions list` prints, each also handed to `onRow` as soon as it is planned (the
 * text output shows the first before all are read). One unreadable session does not hide
 * the others: it is listed with its error.
 */
async function listRows(deps: RuntimeDeps, agent: SessionsAgent, onRow?: (row: SessionListing) => void): Promise<SessionListing[]> {
  const which: ListScope =
    agent === 'mend'
      ? { mend: true, agents: [] }
      : agent === 'all'
        ? { mend: true, agents: FOREIGN_AGENTS, homes: deps.foreignHomes }
        : { mend: false, agents: [agent], homes: deps.foreignHomes };
  // Asked for other agents: every row says whose it is and how large its file is.
  const withAgent = agent !== 'mend';
  const shown = ({
    id,
    path,
    started,
    lastUpdate,
    records,
    firstPrompt,
    kind,
    cause,
    planId,
    error,
    agent: owner,
    agentVersion,
    size,
  }: ProjectSessionRow): SessionListing => ({
    id,
    path,
    started,
    lastUpdate,
    records,
    firstPrompt,
    kind,
    cause,
    planId,
    ...(withAgent ? { agent: owner ?? 'mend', agentVersion: agentVersion ?? null, size: size ?? fileSize(path) } : {}),
    ...(error ? { error } : {}),
  });
  const rows = await listSessions(deps.store, deps.scope, which, onRow ? { onRow: (row) => onRow(shown(row)) } : {});
  return rows.map(shown);
}

function fileSize(path: string): number | null {
  return statSync(path, { throwIfNoEntry: false })?.size ?? null;
}

export async function sessionsListCommand(args: { json: boolean; agent?: SessionsAgent }, io: CommandIo): Promise<number> {
  const agent = args.agent ?? 'mend';
  try {
    if (args.json) {
      io.stdout.write(`${JSON.stringify(await listRows(io.runtime, agent))}\n`);
      return ExitCode.success;
    }
    // Session content comes from elsewhere too (imports, Qwen Code logs): shown, never interpreted.
    const print = (line: string) => io.stdout.write(`${stripControlSequences(line)}\n`);
    // Each row as soon as it is planned.
    const rows = await listRows(io.runtime, agent, (r) => {
      if (r.error) {
        print(`${r.id || r.path}  unreadable: [${r.error.code}] ${r.error.message}`);
        return;
      }
      const prompt = stripControlSequences(r.firstPrompt ?? '')
        .replace(/\s+/g, ' ')
        .slice(0, 60);
      const owner = r.agent === undefined ? '' : `${r.agent.padEnd(6)}  ${String(r.size ?? '-').padStart(9)} B  `;
      print(
        `${owner}${r.id}  ${r.lastUpdate ?? '-'}  ${String(r.records).padStart(5)} ${r.records === 1 ? 'record ' : 'records'}  ${r.kind.padEnd(18)}  ${r.cause.padEnd(7)}  ${prompt}`,
      );
    });
    if (rows.length === 0) {
      io.stdout.write(agent === 'mend' ? 'no sessions for this project\n' : `no ${agent === 'all' ? '' : `${agent} `}sessions for this project\n`);
    }
    return ExitCode.success;
  } catch (error) {
    const code = errorCodeOf(error);
    io.stderr.write(`mend: error [${code}]: ${stripControlSequences(errorMessageOf(error))}\n`);
    return exitCodeFor(code);
  }
}
