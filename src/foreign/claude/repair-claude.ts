/**
 * A repaired copy of a Claude Code transcript, as Claude Code itself would read it.
 *
 * - The file is `<new session id>.jsonl` in the source's folder (Claude's `--resume ID`
 *   finds a transcript by its file name, in the folder of the current directory's
 *   project); the old session id is replaced by the new one in every row.
 * - Each dangling `tool_use` gets one `user` row holding a `tool_result` with mend's
 *   synthetic text (`is_error: true`), chained after the last row of the assistant message
 *   that made the call; a row that hung from that row hangs from the last answer instead,
 *   so the chain stays one line.
 * - Every other readable row is copied as written; damaged lines are left out.
 */
import { basename, dirname, join } from 'node:path';
import { SYNTHETIC_RESULT_REASON } from '../../recovery/synthetic-result.js';
import { answerSites, otherRepairs } from '../repair/dangling-calls.js';
import type { OwnerRepairAction, OwnerRepairWriter } from '../repair/repair-types.js';
import { joinLines, replaceId, sourceLines } from '../repair/source-lines.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export const repairClaude: OwnerRepairWriter = (input) => {
  const { kept, actions } = sourceLines(input.source.bytes);
  const oldId = input.session.sessionId ?? basename(input.source.path, '.jsonl');
  const newId = input.newSessionId;
  const sites = new Map(answerSites(input.plan, input.session).map((s) => [s.afterLine, s]));
  const repairs: OwnerRepairAction[] = [];
  /** anchor row uuid -> the uuid of the last answer chained after it. */
  const rehang = new Map<string, string>();
  const out: string[] = [];

  for (const row of kept) {
    let text = replaceId(row.text, oldId, newId);
    const parent = str(row.value['parentUuid']);
    const to = parent === undefined ? undefined : rehang.get(parent);
    if (to !== undefined) {
      const value = JSON.parse(text) as Record<string, unknown>;
      value['parentUuid'] = to;
      text = JSON.stringify(value);
    }
    out.push(text);
    const site = sites.get(row.line);
    if (!site) continue;
    const anchor = row.value;
    let parentUuid = str(anchor['uuid']) ?? null;
    for (const call of site.calls) {
      const uuid = input.newRowId();
      out.push(
        JSON.stringify({
          parentUuid,
          isSidechain: anchor['isSidechain'] === true,
          type: 'user',
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.callId, content: SYNTHETIC_RESULT_REASON, is_error: true }] },
          uuid,
          timestamp: input.now,
          ...(str(anchor['userType']) ? { userType: anchor['userType'] } : {}),
          ...(str(anchor['cwd']) ? { cwd: anchor['cwd'] } : {}),
          sessionId: newId,
        }),
      );
      repairs.push({ type: 'synthesized_tool_result', callId: call.callId, name: call.name });
      parentUuid = uuid;
    }
    const anchorUuid = str(anchor['uuid']);
    if (anchorUuid !== undefined && parentUuid !== null) rehang.set(anchorUuid, parentUuid);
  }

  for (const repair of otherRepairs(input.plan)) {
    repairs.push({ type: 'not_applied', repair, reason: 'Claude Code reads these rows as written' });
  }
  return {
    agent: 'claude',
    path: join(dirname(input.source.path), `${newId}.jsonl`),
    text: joinLines(out),
    sessionId: newId,
    resume: { cwd: input.session.cwd, argv: ['claude', '--resume', newId] },
    repairs: [...repairs, ...actions],
  };
};
