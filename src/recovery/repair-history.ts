/**
 * Turns an API history as written into one a provider accepts as it is:
 * every call id answered exactly once, directly after its call, in call order.
 *
 * Unlike Qwen's repair, a recorded result is never replaced or duplicated by a
 * synthetic one, and every change is reported (hoists and orphan drops too).
 */
import type { Content, Part, RecoveryRepair } from '../session/records.js';
import { syntheticResultPart } from './synthetic-result.js';

export interface RepairResult {
  history: Content[];
  repairs: RecoveryRepair[];
  /** Call ids that received a synthetic result, in history order. */
  synthesizedCallIds: string[];
}

type ResponseFate = 'kept' | 'hoisted' | 'duplicate' | 'orphan';

interface CallInfo {
  name: string;
  /** Index of the model entry in the input history. */
  entryIndex: number;
  response?: Part;
  hoisted: boolean;
}

function clonePart(part: Part): Part {
  return structuredClone(part);
}

export function repairHistory(input: readonly Content[]): RepairResult {
  const calls = new Map<string, CallInfo>();
  // Fate of every response part, keyed by "entry:part" position in the input.
  const fates = new Map<string, ResponseFate>();
  // Call parts dropped from model entries, keyed the same way.
  const droppedCalls = new Map<string, RecoveryRepair>();

  // Pass 1: pair every response with the first earlier call of the same id.
  const nextModelIndex = new Array<number>(input.length).fill(Number.POSITIVE_INFINITY);
  for (let i = input.length - 1, next = Number.POSITIVE_INFINITY; i >= 0; i--) {
    nextModelIndex[i] = next;
    if (input[i]?.role === 'model') next = i;
  }

  input.forEach((entry, entryIndex) => {
    entry.parts.forEach((part, partIndex) => {
      const key = `${entryIndex}:${partIndex}`;
      if (entry.role === 'model' && part.functionCall) {
        const { id, name } = part.functionCall;
        if (id === undefined || id === '') {
          droppedCalls.set(key, { type: 'dropped_call_without_id', name });
        } else if (calls.has(id)) {
          droppedCalls.set(key, { type: 'dropped_duplicate_call', callId: id, name });
        } else {
          calls.set(id, { name, entryIndex, hoisted: false });
        }
        return;
      }
      if (!part.functionResponse) return;
      const id = part.functionResponse.id;
      const call = id === undefined ? undefined : calls.get(id);
      if (!call || entry.role !== 'user') {
        fates.set(key, 'orphan');
      } else if (call.response) {
        fates.set(key, 'duplicate');
      } else {
        call.response = clonePart(part);
        // Adjacent: in the user entries between the call's model entry and the next model entry.
        const adjacent = entryIndex < (nextModelIndex[call.entryIndex] ?? Number.POSITIVE_INFINITY);
        call.hoisted = !adjacent;
        fates.set(key, adjacent ? 'kept' : 'hoisted');
      }
    });
  });

  // Pass 2: rebuild in order, listing repairs as they are met walking forward.
  const history: Content[] = [];
  const repairs: RecoveryRepair[] = [];
  const synthesizedCallIds: string[] = [];

  input.forEach((entry, entryIndex) => {
    if (entry.role === 'model') {
      const parts: Part[] = [];
      const callIds: string[] = [];
      entry.parts.forEach((part, partIndex) => {
        const dropped = droppedCalls.get(`${entryIndex}:${partIndex}`);
        if (dropped) {
          repairs.push(dropped);
          return;
        }
        if (part.functionResponse) {
          // A result inside a model entry can never be sent.
          repairs.push({ type: 'dropped_orphan_tool_result', callId: part.functionResponse.id ?? '', name: part.functionResponse.name });
          return;
        }
        parts.push(clonePart(part));
        const id = part.functionCall?.id;
        if (id !== undefined) callIds.push(id);
      });
      if (parts.length === 0) return;
      history.push({ role: 'model', parts });
      if (callIds.length === 0) return;
      const results: Part[] = [];
      for (const id of callIds) {
        const call = calls.get(id);
        if (!call) continue;
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
      return;
    }

    const rest: Part[] = [];
    entry.parts.forEach((part, partIndex) => {
      if (!part.functionResponse) {
        // A call inside a user entry is not a call any provider accepts; it is never sent.
        if (!part.functionCall) rest.push(clonePart(part));
        return;
      }
      const fate = fates.get(`${entryIndex}:${partIndex}`);
      const callId = part.functionResponse.id ?? '';
      const name = part.functionResponse.name;
      if (fate === 'duplicate') repairs.push({ type: 'dropped_duplicate_tool_result', callId, name });
      if (fate === 'orphan') repairs.push({ type: 'dropped_orphan_tool_result', callId, name });
    });
    if (rest.length > 0) history.push({ role: 'user', parts: rest });
  });

  return { history, repairs, synthesizedCallIds };
}
