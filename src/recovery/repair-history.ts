/**
 * Turns an API history as written into one a provider accepts as it is:
 * every call id answered exactly once, directly after its call, in call order.
 *
 * Unlike Qwen's repair, a recorded result is never replaced or duplicated by a
 * synthetic one, and every change is reported (hoists and orphan drops too).
 */
import { cloneJson } from '../session/api-history.js';
import type { Content, FunctionResponse, Part, RecoveryRepair } from '../session/records.js';
import { syntheticResultPart } from './synthetic-result.js';

export interface RepairResult {
  history: Content[];
  repairs: RecoveryRepair[];
  /** Call ids that received a synthetic result, in history order. */
  synthesizedCallIds: string[];
}

type ResponseFate = 'kept' | 'hoisted' | 'duplicate' | 'orphan';

interface CallInfo {
  id: string;
  name: string;
  /** Index of the model entry in the input history. */
  entryIndex: number;
  response?: Part;
  hoisted: boolean;
}

export function repairHistory(input: readonly Content[]): RepairResult {
  // Every call occurrence, keyed by its "entry:part" position. Ids are only unique per
  // model entry: some providers number calls call_0, call_1... in every response.
  const calls = new Map<string, CallInfo>();
  // The most recent call of each id: a result answers the latest call of its id.
  const latestById = new Map<string, CallInfo>();
  // Fate of every response part, keyed by "entry:part" position in the input.
  const fates = new Map<string, ResponseFate>();
  // Call parts dropped from model entries, keyed the same way.
  const droppedCalls = new Map<string, RecoveryRepair>();

  // Pass 1: pair every response with the latest earlier call of the same id.
  const nextModelIndex = new Array<number>(input.length).fill(Number.POSITIVE_INFINITY);
  for (let i = input.length - 1, next = Number.POSITIVE_INFINITY; i >= 0; i--) {
    nextModelIndex[i] = next;
    if (input[i]?.role === 'model') next = i;
  }

  input.forEach((entry, entryIndex) => {
    const idsInEntry = new Set<string>();
    entry.parts.forEach((part, partIndex) => {
      const key = `${entryIndex}:${partIndex}`;
      if (part.functionCall) {
        const { id, name } = part.functionCall;
        if (entry.role !== 'model') {
          droppedCalls.set(key, { type: 'dropped_misplaced_call', callId: id ?? '', name });
        } else if (id === undefined || id === '') {
          droppedCalls.set(key, { type: 'dropped_call_without_id', name });
        } else if (idsInEntry.has(id)) {
          // Two calls with one id in one response: no result could tell them apart.
          droppedCalls.set(key, { type: 'dropped_duplicate_call', callId: id, name });
        } else {
          const info: CallInfo = { id, name, entryIndex, hoisted: false };
          idsInEntry.add(id);
          calls.set(key, info);
          latestById.set(id, info);
        }
      }
      // A part may (corruptly) hold a call and a result at once: both are looked at.
      if (!part.functionResponse) return;
      const id = part.functionResponse.id;
      const call = id === undefined ? undefined : latestById.get(id);
      if (!call) {
        fates.set(key, 'orphan');
      } else if (call.response) {
        fates.set(key, 'duplicate');
      } else {
        call.response = { functionResponse: cloneJson(part.functionResponse) as FunctionResponse };
        // Adjacent: in the user entries between the call's model entry and the next model entry.
        const adjacent = entry.role === 'user' && entryIndex < (nextModelIndex[call.entryIndex] ?? Number.POSITIVE_INFINITY);
        call.hoisted = !adjacent;
        fates.set(key, adjacent ? 'kept' : 'hoisted');
      }
    });
  });

  // Pass 2: rebuild in order, listing repairs as they are met walking forward.
  const history: Content[] = [];
  const repairs: RecoveryRepair[] = [];
  const synthesizedCallIds: string[] = [];

  const reportDropped = (part: Part, key: string): void => {
    const response = part.functionResponse;
    if (!response) return;
    const fate = fates.get(key);
    const callId = response.id ?? '';
    if (fate === 'duplicate') repairs.push({ type: 'dropped_duplicate_tool_result', callId, name: response.name });
    if (fate === 'orphan') repairs.push({ type: 'dropped_orphan_tool_result', callId, name: response.name });
  };

  input.forEach((entry, entryIndex) => {
    const kept: Part[] = [];
    const entryCalls: CallInfo[] = [];
    entry.parts.forEach((part, partIndex) => {
      const key = `${entryIndex}:${partIndex}`;
      const dropped = droppedCalls.get(key);
      if (dropped) repairs.push(dropped);
      reportDropped(part, key);
      // Results travel separately (paired after their call); what is left of the part stays.
      const { functionResponse: _response, ...rest } = part;
      if (dropped) delete rest.functionCall;
      if (Object.keys(rest).length === 0) return;
      kept.push(cloneJson(rest) as Part);
      const call = calls.get(key);
      if (call) entryCalls.push(call);
    });
    if (kept.length === 0) return;
    history.push({ role: entry.role, parts: kept });
    if (entry.role !== 'model' || entryCalls.length === 0) return;

    const results: Part[] = [];
    for (const call of entryCalls) {
      const id = call.id;
      if (call.response) {
        if (call.hoisted) repairs.push({ type: 'hoisted_tool_result', callId: id, name: call.name });
        results.push(call.response);
      } else {
        repairs.push({ type: 'synthesized_tool_result', callId: id, name: call.name });
        synthesizedCallIds.push(id);
        results.push(syntheticResultPart(id, call.name));
      }
    }
    history.push({ role: 'user', parts: results });
  });

  return { history, repairs, synthesizedCallIds };
}
