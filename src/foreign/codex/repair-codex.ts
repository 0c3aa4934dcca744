/**
 * A repaired copy of a Codex rollout, as Codex itself would read it.
 *
 * - The file is the source's name with the new session id in place of the old
 *   (`rollout-<time>-<id>.jsonl`, same folder: `codex exec resume ID` finds a rollout by
 *   the id in its name), and the old id is replaced by the new one in every line
 *   (`session_meta`'s `id`, thread and session ids of the events).
 * - Each dangling `function_call` gets one `response_item` `function_call_output` with
 *   mend's synthetic text, right after the lines of the model turn that made the call.
 *   Lines carry an `ordinal` counting lines: the ones after an inserted line move up.
 * - Every other readable line is copied as written; damaged lines are left out.
 */
import { basename, dirname, join } from 'node:path';
import { SYNTHETIC_RESULT_REASON } from '../../recovery/synthetic-result.js';
import { answerSites, otherRepairs } from '../repair/dangling-calls.js';
import type { OwnerRepairAction, OwnerRepairWriter } from '../repair/repair-types.js';
import { joinLines, replaceId, sourceLines } from '../repair/source-lines.js';

/** The line with its top-level `ordinal` set to `to`, every other byte as written. */
function withOrdinal(text: string, from: number, to: number): string {
  const edited = text.replace(`"ordinal":${from}`, `"ordinal":${to}`);
  const check = JSON.parse(edited) as Record<string, unknown>;
  if (check['ordinal'] === to) return edited;
  const value = JSON.parse(text) as Record<string, unknown>;
  value['ordinal'] = to;
  return JSON.stringify(value);
}

export const repairCodex: OwnerRepairWriter = (input) => {
  const { kept, actions } = sourceLines(input.source.bytes);
  const oldId = input.session.sessionId;
  const newId = input.newSessionId;
  const sites = new Map(answerSites(input.plan, input.session).map((s) => [s.afterLine, s]));
  const repairs: OwnerRepairAction[] = [];
  const out: string[] = [];
  let shift = 0;
  let lastOrdinal: number | null = null;

  for (const row of kept) {
    let text = replaceId(row.text, oldId, newId);
    const ordinal = row.value['ordinal'];
    if (typeof ordinal === 'number') {
      if (shift > 0) text = withOrdinal(text, ordinal, ordinal + shift);
      lastOrdinal = ordinal + shift;
    }
    out.push(text);
    const site = sites.get(row.line);
    if (!site) continue;
    for (const call of site.calls) {
      const next = lastOrdinal === null ? null : lastOrdinal + 1;
      out.push(
        JSON.stringify({
          timestamp: input.now,
          ...(next === null ? {} : { ordinal: next }),
          type: 'response_item',
          payload: { type: 'function_call_output', call_id: call.callId, output: SYNTHETIC_RESULT_REASON },
        }),
      );
      if (next !== null) {
        lastOrdinal = next;
        shift += 1;
      }
      repairs.push({ type: 'synthesized_tool_result', callId: call.callId, name: call.name });
    }
  }

  for (const repair of otherRepairs(input.plan)) {
    repairs.push({ type: 'not_applied', repair, reason: 'Codex reads these lines as written' });
  }
  const name = basename(input.source.path);
  const newName = oldId && name.includes(oldId) ? replaceId(name, oldId, newId) : `rollout-${input.now.slice(0, 19).replaceAll(':', '-')}-${newId}.jsonl`;
  return {
    agent: 'codex',
    path: join(dirname(input.source.path), newName),
    text: joinLines(out),
    sessionId: newId,
    resume: { cwd: input.session.cwd, argv: ['codex', 'exec', 'resume', newId] },
    repairs: [...repairs, ...actions],
  };
};
