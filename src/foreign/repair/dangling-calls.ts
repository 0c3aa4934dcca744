/**
 * The calls the plan answers with a synthetic result, found in the owner's rows: for each,
 * the record that holds the call (by the owner's call id, which the reader keeps; all its
 * fragments when the owner spread one message over several rows) and the last source line
 * of that record, after which the owner's format wants the answer.
 * Grouped by that line, in the plan's order.
 */
import type { SessionRecoveryPlan } from '../../recovery/plan-types.js';
import type { ForeignSession } from '../adapter.js';

export interface DanglingCall {
  callId: string;
  name: string;
}

export interface AnswerSite {
  /** The last source line of the record holding the calls. */
  afterLine: number;
  /** Every source line of that record. */
  recordLines: number[];
  calls: DanglingCall[];
}

export function answerSites(plan: SessionRecoveryPlan, session: ForeignSession): AnswerSite[] {
  const sites = new Map<number, AnswerSite>();
  for (const repair of plan.repairs) {
    if (repair.type !== 'synthesized_tool_result') continue;
    const index = session.records.findIndex((r) => r.type === 'assistant' && (r.message?.parts ?? []).some((p) => p.functionCall?.id === repair.callId));
    // A message spread over several rows comes as fragments sharing one uuid: answer after the last.
    const uuid = index === -1 ? undefined : session.records[index]!.uuid;
    const lines = session.records.flatMap((r, i) => (r.uuid === uuid ? (session.rowsBySource[i]?.lines ?? []) : []));
    if (lines.length === 0) throw new Error(`the plan answers call ${repair.callId}, which no row of the source holds`);
    const afterLine = Math.max(...lines);
    let site = sites.get(afterLine);
    if (!site) sites.set(afterLine, (site = { afterLine, recordLines: lines, calls: [] }));
    site.calls.push({ callId: repair.callId, name: repair.name });
  }
  return [...sites.values()];
}

/** The plan's repairs other than synthesized results: what an owner's file keeps as written. */
export function otherRepairs(plan: SessionRecoveryPlan): SessionRecoveryPlan['repairs'] {
  return plan.repairs.filter((r) => r.type !== 'synthesized_tool_result');
}
