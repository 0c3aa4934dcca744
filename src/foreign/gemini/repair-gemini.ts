/**
 * A repaired copy of a Gemini CLI session (JSONL), as Gemini CLI itself would read it.
 *
 * - The file is the source's name with the new id's first eight characters in place of
 *   the old (`session-<time>-<id8>.jsonl`, same `chats` folder), and the old session id is
 *   replaced by the new one in every line (the first line's `sessionId`).
 * - Gemini writes a model record's tool calls, results included, only once the tools
 *   finish, and its records are upserts by id: a call with no result gets its answer as a
 *   later copy of the same record (same id, the last copy wins) whose call carries mend's
 *   synthetic result with status `error`. A call killed while it ran was never written: there
 *   is nothing to answer, and nothing is added.
 * - Every other readable line is copied as written; damaged lines are left out.
 */
import { basename, dirname, join } from 'node:path';
import { SYNTHETIC_RESULT_REASON } from '../../recovery/synthetic-result.js';
import { answerSites, otherRepairs } from '../repair/dangling-calls.js';
import type { OwnerRepairAction, OwnerRepairWriter } from '../repair/repair-types.js';
import { joinLines, replaceId, sourceLines } from '../repair/source-lines.js';

export const repairGemini: OwnerRepairWriter = (input) => {
  if (input.source.path.endsWith('.json')) {
    throw new Error('the legacy whole-file Gemini session (.json) is read, not repaired: Gemini CLI 0.61 writes JSONL');
  }
  const { kept, actions } = sourceLines(input.source.bytes);
  const oldId = input.session.sessionId;
  const newId = input.newSessionId;
  const sites = new Map(answerSites(input.plan, input.session).map((s) => [s.afterLine, s]));
  const repairs: OwnerRepairAction[] = [];
  const out: string[] = [];

  for (const row of kept) {
    out.push(replaceId(row.text, oldId, newId));
    const site = sites.get(row.line);
    if (!site) continue;
    const answered = new Map(site.calls.map((c) => [c.callId, c]));
    const record = JSON.parse(replaceId(row.text, oldId, newId)) as Record<string, unknown>;
    const calls = Array.isArray(record['toolCalls']) ? (record['toolCalls'] as Array<Record<string, unknown>>) : [];
    record['toolCalls'] = calls.map((call) => {
      const id = typeof call['id'] === 'string' ? call['id'] : '';
      const dangling = answered.get(id);
      if (!dangling) return call;
      return { ...call, status: 'error', result: [{ functionResponse: { id, name: dangling.name, response: { error: SYNTHETIC_RESULT_REASON } } }] };
    });
    out.push(JSON.stringify(record));
    for (const call of site.calls) repairs.push({ type: 'synthesized_tool_result', callId: call.callId, name: call.name });
  }

  for (const repair of otherRepairs(input.plan)) {
    repairs.push({ type: 'not_applied', repair, reason: 'Gemini CLI reads these records as written' });
  }
  const name = basename(input.source.path);
  const old8 = oldId?.slice(0, 8);
  const newName =
    old8 && name.endsWith(`-${old8}.jsonl`)
      ? `${name.slice(0, -`${old8}.jsonl`.length)}${newId.slice(0, 8)}.jsonl`
      : `session-${input.now.slice(0, 16).replaceAll(':', '-')}-${newId.slice(0, 8)}.jsonl`;
  return {
    agent: 'gemini',
    path: join(dirname(input.source.path), newName),
    text: joinLines(out),
    sessionId: newId,
    resume: { cwd: input.session.cwd, argv: ['gemini', '--resume', newId] },
    repairs: [...repairs, ...actions],
  };
};
