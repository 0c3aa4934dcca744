/**
 * `mend sessions list [--json]`: the sessions of this project, newest first, with
 * the recovery kind each would resume as. Read-only; takes no lock.
 */
import { basename } from 'node:path';
import { isMendError } from '../errors.js';
import { readSessionLog } from '../session/log-reader.js';
import { buildConversation } from '../session/conversation-loader.js';
import { buildPlanForSession } from '../recovery/build-plan.js';
import { listSessions, projectDir } from '../session/session-paths.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import type { PlanIo } from './plan-command.js';

export interface SessionListing {
  id: string;
  path: string;
  started: string | null;
  lastUpdate: string | null;
  records: number;
  firstPrompt: string | null;
  kind: string;
  planId: string;
}

export async function listProjectSessions(home: string, projectRoot: string): Promise<SessionListing[]> {
  const rows: SessionListing[] = [];
  for (const path of await listSessions(projectDir(home, projectRoot))) {
    const read = await readSessionLog(path);
    const loaded = buildConversation(read, { fallbackSessionId: basename(path, '.jsonl') });
    const id = loaded.conversation.sessionId;
    const plan = buildPlanForSession(loaded);
    const firstUser = read.records.find((r) => r.record.type === 'user');
    const firstText = firstUser?.record.type === 'user' ? firstUser.record.message.parts.find((p) => typeof p.text === 'string')?.text : undefined;
    rows.push({
      id,
      path,
      started: read.records[0]?.record.timestamp ?? null,
      lastUpdate: read.records.at(-1)?.record.timestamp ?? null,
      records: loaded.conversation.totalRecords,
      firstPrompt: firstText === undefined ? null : firstText.slice(0, 200),
      kind: plan.kind,
      planId: plan.planId,
    });
  }
  return rows.sort((a, b) => (b.lastUpdate ?? '').localeCompare(a.lastUpdate ?? ''));
}

export async function sessionsListCommand(args: { json: boolean }, io: PlanIo): Promise<number> {
  try {
    const rows = await listProjectSessions(io.session.home, io.session.projectRoot);
    if (args.json) {
      io.stdout.write(`${JSON.stringify(rows)}\n`);
    } else if (rows.length === 0) {
      io.stdout.write('no sessions for this project\n');
    } else {
      for (const r of rows) {
        const prompt = (r.firstPrompt ?? '').replace(/\s+/g, ' ').slice(0, 60);
        io.stdout.write(`${r.id}  ${r.lastUpdate ?? '-'}  ${String(r.records).padStart(5)} records  ${r.kind.padEnd(18)}  ${prompt}\n`);
      }
    }
    return ExitCode.success;
  } catch (error) {
    const code = isMendError(error) ? error.code : 'internal';
    io.stderr.write(`mend: error [${code}]: ${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodeFor(code);
  }
}
