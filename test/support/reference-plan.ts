/**
 * A reference implementation of the recovery plan rules (docs/recovery.md), written
 * to be read, not to be fast: small steps, plain loops, quadratic where that is
 * clearer. It is the oracle buildSessionRecoveryPlan is compared with on generated
 * sessions and on every corpus case (test/recovery/reference-plan.test.ts), and the
 * one a later performance rewrite must keep matching.
 *
 * It shares nothing with src/recovery (not even the part predicates): a rule
 * misunderstood there is not repeated here by construction. From the loader it takes
 * only the active chain (`conversation.records`, the compressed history, gaps, cycle
 * diagnostics) and `writtenByMend`; markers after the last model entry are counted
 * again from the records.
 *
 * Covered: kind, cause, lastError, repairs in order, apiHistory, continuation (mode,
 * parts, synthetic call ids) and previousAttempts. Not covered: planId, notice text.
 */
import type { BuildPlanInput, ContinuationMode, RecoveryCause } from '../../src/recovery/plan-types.js';
import type { ChatRecord, Content, Part, RecoveryRepair, SessionRecoveryKind } from '../../src/session/records.js';
import { SYNTHETIC_RESULT_REASON } from '../../src/recovery/synthetic-result.js';

export interface ReferencePlan {
  kind: SessionRecoveryKind;
  cause: RecoveryCause;
  lastError: { code: string; message: string } | null;
  repairs: RecoveryRepair[];
  apiHistory: Content[];
  continuation: { mode: ContinuationMode; parts: Part[]; syntheticCallIds: string[] } | null;
  previousAttempts: number;
}

// ---- what a part is -------------------------------------------------------------------------

/** Keys that carry nothing by themselves. */
function carriesNothing(part: Part, key: string): boolean {
  if (key === 'thoughtSignature') return true;
  if (key === 'thought') return part.thought !== true;
  if (key === 'text') return part.text === '';
  return false;
}

/** `{}`, `{thought: false}`, `{thoughtSignature}`, `{text: ""}` and mixes of them. */
function isEmpty(part: Part): boolean {
  return Object.keys(part).every((key) => carriesNothing(part, key));
}

function isThought(part: Part): boolean {
  return part.thought === true && part.functionCall === undefined && part.functionResponse === undefined;
}

function without(part: Part, key: 'functionCall' | 'functionResponse'): Part {
  const copy = { ...part };
  delete copy[key];
  return copy;
}

/** A model entry counts when, results split off, it holds a call or some non-thought content. */
function isModelEntry(entry: Content): boolean {
  if (entry.role !== 'model') return false;
  return entry.parts.some((part) => {
    if (part.functionCall !== undefined) return true;
    const rest = without(part, 'functionResponse');
    return !isThought(rest) && !isEmpty(rest);
  });
}

/** User content worth sending again: not a result, call or thought, not empty. */
function isRealUserContent(part: Part): boolean {
  if (part.functionResponse !== undefined || part.functionCall !== undefined || part.thought === true) return false;
  return !isEmpty(part);
}

function lastModelEntry(history: readonly Content[]): number {
  for (let i = history.length - 1; i >= 0; i--) if (isModelEntry(history[i]!)) return i;
  return -1;
}

// ---- pairing results with calls ---------------------------------------------------------------

interface Call {
  id: string;
  name: string;
  entry: number;
  result: { entry: number; part: number; renamed: boolean } | null;
}

type ResultFate = { type: 'answers'; call: Call } | { type: 'duplicate' } | { type: 'orphan' };
type CallFate = { type: 'kept'; call: Call } | { type: 'dropped'; repair: RecoveryRepair };

interface Pairing {
  calls: Call[];
  /** Per `entry:part`, what happens to the call in that part (when it holds one). */
  callFates: Map<string, CallFate>;
  /** Per `entry:part`, what happens to the result in that part (when it holds one). */
  resultFates: Map<string, ResultFate>;
}

const at = (entry: number, part: number): string => `${entry}:${part}`;

/**
 * Walks the history once, in order. A call is kept when it is in a model entry, has an
 * id, and its id is new in that entry. A result answers the latest earlier kept call
 * with its id and name; when no call of its id has that name, the latest call of its
 * id (renamed). A call already answered makes the result a duplicate, except that a
 * result under the call's own name displaces one taken under another name.
 */
function pair(history: readonly Content[]): Pairing {
  const calls: Call[] = [];
  const callFates = new Map<string, CallFate>();
  const resultFates = new Map<string, ResultFate>();

  history.forEach((entry, e) => {
    const idsInEntry: string[] = [];
    entry.parts.forEach((part, p) => {
      const call = part.functionCall;
      if (call !== undefined) {
        if (entry.role !== 'model') {
          callFates.set(at(e, p), { type: 'dropped', repair: { type: 'dropped_misplaced_call', callId: call.id ?? '', name: call.name } });
        } else if (call.id === undefined || call.id === '') {
          callFates.set(at(e, p), { type: 'dropped', repair: { type: 'dropped_call_without_id', name: call.name } });
        } else if (idsInEntry.includes(call.id)) {
          callFates.set(at(e, p), { type: 'dropped', repair: { type: 'dropped_duplicate_call', callId: call.id, name: call.name } });
        } else {
          idsInEntry.push(call.id);
          const kept: Call = { id: call.id, name: call.name, entry: e, result: null };
          calls.push(kept);
          callFates.set(at(e, p), { type: 'kept', call: kept });
        }
      }

      const result = part.functionResponse;
      if (result === undefined) return;
      const sameId = result.id === undefined ? [] : calls.filter((c) => c.id === result.id);
      const sameName = sameId.filter((c) => c.name === result.name);
      const target = sameName.at(-1) ?? sameId.at(-1);
      if (target === undefined) {
        resultFates.set(at(e, p), { type: 'orphan' });
        return;
      }
      const renamed = sameName.length === 0;
      if (target.result !== null && !(target.result.renamed && !renamed)) {
        resultFates.set(at(e, p), { type: 'duplicate' });
        return;
      }
      if (target.result !== null) {
        // Displaced by a result under the call's own name.
        resultFates.set(at(target.result.entry, target.result.part), { type: 'duplicate' });
      }
      target.result = { entry: e, part: p, renamed };
      resultFates.set(at(e, p), { type: 'answers', call: target });
    });
  });
  return { calls, callFates, resultFates };
}

// ---- repair ----------------------------------------------------------------------------------

function syntheticResult(call: Call): Part {
  return { functionResponse: { id: call.id, name: call.name, response: { error: SYNTHETIC_RESULT_REASON } } };
}

/** The result part a kept call gets: the recorded one (under the call's name) or a synthetic one. */
function resultPartOf(call: Call, history: readonly Content[]): Part {
  if (call.result === null) return syntheticResult(call);
  const recorded = history[call.result.entry]!.parts[call.result.part]!.functionResponse!;
  return { functionResponse: { ...recorded, name: call.name } };
}

/** Whether a result sits in a user entry after its call and before the next model entry. */
function isAdjacent(call: Call, history: readonly Content[]): boolean {
  const where = call.result!.entry;
  if (history[where]!.role !== 'user' || where <= call.entry) return false;
  for (let i = call.entry + 1; i < where; i++) if (isModelEntry(history[i]!)) return false;
  return true;
}

function repair(history: readonly Content[]): { history: Content[]; repairs: RecoveryRepair[]; synthesized: Set<Part> } {
  const { callFates, resultFates } = pair(history);
  const out: Content[] = [];
  const repairs: RecoveryRepair[] = [];
  // The synthetic result parts (by identity: a later call may reuse a synthesized call's id).
  const synthesized = new Set<Part>();

  history.forEach((entry, e) => {
    const kept: Part[] = [];
    const entryCalls: Call[] = [];
    entry.parts.forEach((part, p) => {
      let rest = part;
      const callFate = callFates.get(at(e, p));
      if (callFate?.type === 'dropped') {
        repairs.push(callFate.repair);
        rest = without(rest, 'functionCall');
      } else if (callFate?.type === 'kept') {
        entryCalls.push(callFate.call);
      }
      const resultFate = resultFates.get(at(e, p));
      if (resultFate !== undefined) {
        const r = part.functionResponse!;
        if (resultFate.type === 'duplicate') repairs.push({ type: 'dropped_duplicate_tool_result', callId: r.id ?? '', name: r.name });
        if (resultFate.type === 'orphan') repairs.push({ type: 'dropped_orphan_tool_result', callId: r.id ?? '', name: r.name });
        // Paired results travel with their call; the others are dropped.
        rest = without(rest, 'functionResponse');
      }
      if (!isEmpty(rest)) kept.push(rest);
    });

    // An entry left with nothing, or (without calls) with nothing but thoughts, is not sent.
    if (kept.length === 0 || (entryCalls.length === 0 && kept.every(isThought))) return;
    out.push({ role: entry.role, parts: kept });
    if (entryCalls.length === 0) return;

    // Right after a model entry with calls: exactly its results, in call order.
    const results: Part[] = [];
    for (const call of entryCalls) {
      if (call.result === null) {
        repairs.push({ type: 'synthesized_tool_result', callId: call.id, name: call.name });
      } else {
        if (!isAdjacent(call, history)) repairs.push({ type: 'hoisted_tool_result', callId: call.id, name: call.name });
        if (call.result.renamed) {
          const recordedName = history[call.result.entry]!.parts[call.result.part]!.functionResponse!.name;
          repairs.push({ type: 'renamed_tool_result', callId: call.id, name: call.name, recordedName });
        }
      }
      const part = resultPartOf(call, history);
      if (call.result === null) synthesized.add(part);
      results.push(part);
    }
    out.push({ role: 'user', parts: results });
  });
  return { history: out, repairs, synthesized };
}

// ---- classification --------------------------------------------------------------------------

function classify(history: readonly Content[]): { state: 'complete' | 'interrupted_prompt' | 'interrupted_turn'; lastModel: number } {
  const lastModel = lastModelEntry(history);
  const { calls, resultFates } = pair(history);
  const tailCalls = calls.filter((c) => c.entry === lastModel && lastModel >= 0);
  const dangling = tailCalls.filter((c) => c.result === null);
  if (dangling.length > 0) return { state: 'interrupted_turn', lastModel };

  // Something trails the last model entry that the model has not seen: results of its
  // calls (wherever after the call they sit) or real user content after it.
  const answeredTail = [...resultFates.values()].some((f) => f.type === 'answers' && f.call.entry === lastModel && lastModel >= 0);
  const userContent = history.slice(lastModel + 1).some((entry) => entry.role === 'user' && entry.parts.some(isRealUserContent));
  if (answeredTail || userContent) return { state: 'interrupted_prompt', lastModel };
  return { state: 'complete', lastModel };
}

// ---- markers and cause -----------------------------------------------------------------------

interface TailMarkers {
  previousAttempts: number;
  /** The abort or failure marker that ends the tail, if one does. */
  endedBy: { subtype: 'turn_aborted' | 'turn_failed'; payload: Record<string, unknown> } | null;
}

const ABORT_REASONS = ['sigint', 'sigterm', 'interrupt'];

function markersAfterLastModel(records: readonly ChatRecord[]): TailMarkers {
  let start = 0;
  records.forEach((record, i) => {
    if (record.type === 'assistant' && isModelEntry({ role: 'model', parts: record.message.parts })) start = i + 1;
  });
  let previousAttempts = 0;
  let endedBy: TailMarkers['endedBy'] = null;
  for (const record of records.slice(start)) {
    if (record.type !== 'system') {
      if (record.type === 'user' && record.message.parts.length > 0) endedBy = null; // a new prompt: the tail went on
      continue;
    }
    const payload = (record.systemPayload ?? {}) as Record<string, unknown>;
    if (record.subtype === 'recovery') {
      previousAttempts++;
      endedBy = null;
    } else if (record.subtype === 'turn_aborted' && ABORT_REASONS.includes(payload.reason as string)) {
      endedBy = { subtype: 'turn_aborted', payload };
    } else if (record.subtype === 'turn_failed' && typeof payload.code === 'string' && typeof payload.message === 'string') {
      endedBy = { subtype: 'turn_failed', payload };
    }
  }
  return { previousAttempts, endedBy };
}

// ---- the plan --------------------------------------------------------------------------------

export function referencePlan(input: BuildPlanInput): ReferencePlan {
  const conversation = input.conversation;
  // The history as written: the checkpoint's history, then one entry per non-system record with parts.
  const written: Content[] = [...(conversation.compressedHistory ?? [])];
  for (const record of conversation.records) {
    if (record.type === 'system' || record.message.parts.length === 0) continue;
    written.push({ role: record.type === 'assistant' ? 'model' : 'user', parts: record.message.parts });
  }

  const gaps = (input.historyGaps ?? []).filter((g) => !g.beforeCheckpoint);
  const cycle = (input.diagnostics ?? []).some((d) => d.code === 'parent_cycle' && !d.beforeCheckpoint);
  const tail = classify(written);
  const kind: SessionRecoveryKind = gaps.length > 0 || cycle ? 'degraded_history' : tail.state === 'complete' ? 'clean' : tail.state;

  const markers = markersAfterLastModel(conversation.records);
  let cause: RecoveryCause;
  if (input.activeWriter) cause = 'running';
  else if (markers.endedBy?.subtype === 'turn_aborted') cause = 'aborted';
  else if (markers.endedBy?.subtype === 'turn_failed') cause = 'failed';
  else if (tail.state === 'complete') cause = 'none';
  else cause = conversation.writtenByMend ? 'crash' : 'unknown';
  const lastError =
    cause === 'failed' && markers.endedBy ? { code: markers.endedBy.payload.code as string, message: markers.endedBy.payload.message as string } : null;

  const repaired = repair(written);
  const repairs: RecoveryRepair[] = [
    ...gaps.map((g): RecoveryRepair => ({ type: 'history_gap', childUuid: g.childUuid, missingParentUuid: g.missingParentUuid })),
    ...repaired.repairs,
  ];

  let continuation: ReferencePlan['continuation'] = null;
  if (kind === 'interrupted_prompt' || kind === 'interrupted_turn') {
    const parts = repaired.history.slice(lastModelEntry(repaired.history) + 1).flatMap((entry) => entry.parts);
    const syntheticCallIds = parts.filter((part) => repaired.synthesized.has(part)).map((part) => part.functionResponse!.id ?? '');
    continuation = { mode: kind === 'interrupted_turn' ? 'tool_result_parts' : 'retry_user_parts', parts, syntheticCallIds };
  }

  return { kind, cause, lastError, repairs, apiHistory: repaired.history, continuation, previousAttempts: markers.previousAttempts };
}
