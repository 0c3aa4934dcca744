/**
 * Turns an API history as written into one a provider accepts as it is:
 * every call id answered exactly once, directly after its call, in call order.
 *
 * Unlike Qwen's repair, a recorded result is never replaced or duplicated by a
 * synthetic one, and every change is reported (hoists and orphan drops too).
 */
import { cloneJson } from '../session/api-history.js';
import type { Content, FunctionResponse, Part, RecoveryRepair } from '../session/records.js';
import { isEmptyPart, isModelEntry, isThoughtPart } from '../session/model-entry.js';
import { CallTable } from './call-table.js';
import { toSource, type HistorySource } from './history-source.js';
import { syntheticResultPart } from './synthetic-result.js';

export interface RepairResult {
  /** The repaired history (only what input entries from `keepFrom` on give, when that is set). */
  history: Content[];
  /** With `keepFrom`: the entries the repaired history has before those of input entry `keepFrom`. */
  skipped?: number;
  repairs: RecoveryRepair[];
  /** Call ids that received a synthetic result, in history order. */
  synthesizedCallIds: string[];
  /**
   * The synthetic result parts themselves, as they stand in `history`: an id alone cannot
   * tell them from a recorded result of a later call that reuses the id (call_0 numbering).
   */
  syntheticParts: Set<Part>;
}

export interface RepairOptions {
  /**
   * Reuse the input's entries and parts where nothing changes instead of cloning
   * them. Only for a caller that treats input and output as immutable afterwards
   * (buildSessionRecoveryPlan: plans and the loaded records they view are never
   * changed). By default the result shares nothing with the input.
   */
  shareUnchanged?: boolean;
  /**
   * Keep only what input entries from this index on give; the entries before are counted
   * (`skipped`), not kept. For a plan over an outline, which needs the repairs
   * and the length of the whole repaired history but the entries of its tail only.
   */
  keepFrom?: number;
}

const enum Fate {
  None = 0,
  Kept = 1,
  Hoisted = 2,
  Duplicate = 3,
  Orphan = 4,
}

const pairKey = (id: string, name: string): string => `${id}\u0000${name}`;

/** A counted entry (before RepairOptions.keepFrom) is sent / is a model entry (role). */
const SENT = 1;
const MODEL = 2;

/** A part repair of a counted entry, at part number k. */
interface CountedRepair {
  k: number;
  entry: number;
  repair: RecoveryRepair;
}

/**
 * What stays of a part in its entry once its result is taken out (and its call, when the
 * call is dropped): the part itself, a new part with the rest, or null when nothing is
 * sent. One rule for both passes: pass 2 keeps it, pass 1 counts it for counted entries.
 */
function keptOf(part: Part, dropped: boolean): Part | null {
  if (!dropped && isPlain(part)) {
    if (!Object.hasOwn(part, 'functionResponse')) return !hasOwnKey(part) || isEmptyPart(part) ? null : part;
    if (hasOnlyKey(part, 'functionResponse')) return null;
  }
  const { functionResponse: _response, ...others } = part;
  if (dropped) delete others.functionCall;
  return isEmptyPart(others) ? null : others;
}

/** keptOf's answer as bits: something of the part is sent; what is sent is a thought. */
const KEPT = 1;
const KEPT_THOUGHT = 2;

function keptFactOf(part: Part, dropped: boolean): number {
  const kept = keptOf(part, dropped);
  return kept === null ? 0 : isThoughtPart(kept) ? KEPT | KEPT_THOUGHT : KEPT;
}

/**
 * keptFactOf of every part of a shared (frozen) parts array, call kept in bits 0-1 and
 * call dropped in bits 2-3: it depends on the parts' keys and values, never on ids.
 */
const keptFactsCache = new WeakMap<readonly Part[], Uint8Array>();
function keptFactsOf(parts: readonly Part[]): Uint8Array {
  let facts = keptFactsCache.get(parts);
  if (facts === undefined) {
    facts = new Uint8Array(parts.length);
    for (let p = 0; p < parts.length; p++) facts[p] = keptFactOf(parts[p]!, false) | (keptFactOf(parts[p]!, true) << 2);
    keptFactsCache.set(parts, facts);
  }
  return facts;
}

/** The response of a call whose result entry is only counted (before RepairOptions.keepFrom): it is answered. */
const ANSWERED: Part = Object.freeze({ functionResponse: Object.freeze({ name: '', response: Object.freeze({}) }) });

/** Whether every part is a thought (holes skipped): what a thought-only entry leaves. */
function onlyThoughts(parts: readonly Part[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (p !== undefined && !isThoughtPart(p)) return false;
  }
  return true;
}

/** Plain objects (and null-prototype ones) clone through the plain path of cloneJson. */
function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Object.keys(value).length > 0, without building the array. */
function hasOwnKey(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return true;
  return false;
}

/**
 * An entry that is exactly `{ role, parts }` (keys in that order) around a plain
 * array: what pass 2 would build from the same parts, so it can be reused as it is.
 */
function isBareEntry(entry: Content): boolean {
  if (!isPlain(entry) || !Array.isArray(entry.parts) || Object.getPrototypeOf(entry.parts) !== Array.prototype) return false;
  let n = 0;
  for (const key in entry) {
    if (!Object.hasOwn(entry, key)) continue;
    if (key !== (n === 0 ? 'role' : n === 1 ? 'parts' : '')) return false;
    n++;
  }
  return n === 2;
}

/** A new plain array of parts[0, end), which holds no holes. */
function copyPrefix(parts: readonly Part[], end: number): Part[] {
  const out: Part[] = [];
  for (let i = 0; i < end; i++) out.push(parts[i]!);
  return out;
}

/** Whether the only own enumerable key of `value` is `name`. */
function hasOnlyKey(value: object, name: string): boolean {
  let seen = false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key !== name || seen) return false;
    seen = true;
  }
  return seen;
}

/**
 * Parts are numbered in input order (entry by entry, part by part), the same in
 * both passes, so per-part facts live in arrays indexed by that number.
 */
export function repairHistory(written: readonly Content[] | HistorySource, options: RepairOptions = {}): RepairResult {
  const share = options.shareUnchanged === true;
  const keepFrom = options.keepFrom ?? 0;
  const input = toSource(written);
  const partCount = input.partCount();

  // Every call occurrence, by part number (1 + its index in `calls`; 0: none). Ids are
  // only unique per model entry: some providers number calls call_0, call_1... in every response.
  const calls = new CallTable();
  const callAt = new Int32Array(partCount);
  // A result answers the latest earlier call of its id AND function name: servers that
  // number calls call_0, call_1... in every response reuse ids, and a late result of an
  // older call must not close a newer call of another tool. A result whose name no call
  // of its id has answers the latest call of its id and is renamed (reported). The
  // latest call is almost always one of the latest model entry (calls[recentStart...]),
  // found by a short scan; only for other results are the maps brought up to date.
  const latestById = new Map<string, number>();
  const latestByPair = new Map<string, number>();
  let indexed = 0;
  let recentStart = 0;
  const findCall = (id: string, name: string): { call: number; renamed: boolean } | undefined => {
    const end = calls.count;
    let byId = -1;
    if (end - recentStart <= 16) {
      for (let j = end - 1; j >= recentStart; j--) {
        if (calls.ids[j] !== id) continue;
        if (calls.names[j] === name) return { call: j, renamed: false };
        if (byId < 0) byId = j;
      }
    }
    for (; indexed < end; indexed++) {
      latestById.set(calls.ids[indexed]!, indexed);
      latestByPair.set(pairKey(calls.ids[indexed]!, calls.names[indexed]!), indexed);
    }
    const pair = latestByPair.get(pairKey(id, name));
    if (pair !== undefined) return { call: pair, renamed: false };
    const any = byId >= 0 ? byId : latestById.get(id);
    return any !== undefined ? { call: any, renamed: true } : undefined;
  };
  // Fate of every response part, by part number.
  const fates = new Uint8Array(partCount);
  // Call parts dropped from model entries, by part number.
  const droppedCalls = new Map<number, RecoveryRepair>();

  // Entries before keepFrom are counted, not kept: pass 1 notes what pass 2 decides for
  // each (is the entry itself sent, is it a model entry) and the part repairs pass 2
  // lists there, so that pass 2 need not make those entries again (a plan over a
  // 100k-record outline made every entry twice, a third of its time).
  const counted = new Uint8Array(Math.min(keepFrom, input.length));
  const countedRepairs: CountedRepair[] = [];
  /** Call -> the entry of the result taken under another name (counted entries only). */
  const renamedEntry = new Map<number, number>();
  let countedParts = 0;

  // Pass 1: pair every response with the latest earlier call of the same id.
  // (An empty or thought-only model entry is dropped below, so it separates nothing.)
  // Int32 with a never-reached index for "none": a Float64Array was 8 bytes an entry.
  const NONE = 0x7fffffff;
  const nextModelIndex = new Int32Array(input.length).fill(NONE);
  for (let i = input.length - 1, next = NONE; i >= 0; i--) {
    nextModelIndex[i] = next;
    if (input.isModelEntry(i)) next = i;
  }

  // Per entry: the call ids seen in it (a short list, as entries hold a handful of calls,
  // a set past that) and whether it keeps a call.
  let idsInEntry: string[] | Set<string> | undefined;
  let hasCalls = false;

  /** The call at part number k of entry entryIndex: its repair when it is dropped. */
  const noteCall = (k: number, entryIndex: number, role: string, id: string | undefined, name: string): RecoveryRepair | undefined => {
    let dropped: RecoveryRepair | undefined;
    if (role !== 'model') {
      dropped = { type: 'dropped_misplaced_call', callId: id ?? '', name };
    } else if (id === undefined || id === '') {
      dropped = { type: 'dropped_call_without_id', name };
    } else if (idsInEntry !== undefined && (Array.isArray(idsInEntry) ? idsInEntry.includes(id) : idsInEntry.has(id))) {
      // Two calls with one id in one response: no result could tell them apart.
      dropped = { type: 'dropped_duplicate_call', callId: id, name };
    } else {
      if (idsInEntry === undefined) idsInEntry = [id];
      else if (!Array.isArray(idsInEntry)) idsInEntry.add(id);
      else if (idsInEntry.push(id) > 16) idsInEntry = new Set(idsInEntry);
      callAt[k] = calls.add(id, name, entryIndex) + 1;
      hasCalls = true;
    }
    if (dropped !== undefined) droppedCalls.set(k, dropped);
    return dropped;
  };

  /**
   * The result at part number k of entry entryIndex (`id`, `name`): its fate. `part` and
   * `response` are the recorded ones; a counted entry's need not be given (its results
   * answer calls of counted entries, whose results are only ANSWERED).
   */
  const noteResponse = (k: number, entryIndex: number, role: string, id: string | undefined, name: string, part?: Part, response?: FunctionResponse): void => {
    const counting = entryIndex < keepFrom;
    const found = id === undefined ? undefined : findCall(id, name);
    const call = found?.call;
    if (call === undefined) {
      fates[k] = Fate.Orphan;
      if (counting) countedRepairs.push({ k, entry: entryIndex, repair: { type: 'dropped_orphan_tool_result', callId: id ?? '', name } });
    } else if (calls.responses[call] && !(calls.renamedFrom.has(call) && !found!.renamed)) {
      fates[k] = Fate.Duplicate;
      if (counting) countedRepairs.push({ k, entry: entryIndex, repair: { type: 'dropped_duplicate_tool_result', callId: id ?? '', name } });
    } else if (found!.renamed) {
      // Sent under its call's name: a provider pairs results with calls by both.
      calls.renamedFrom.set(call, name);
      if (counting) renamedEntry.set(call, entryIndex);
      calls.responseK[call] = k;
      // (A call comes before its results: a counted entry's results answer counted calls.)
      calls.responses[call] =
        calls.entry[call]! < keepFrom ? ANSWERED : { functionResponse: { ...(cloneJson(response!) as FunctionResponse), name: calls.names[call]! } };
    } else {
      // A result under the call's own name beats one taken under another name: that one
      // becomes the duplicate.
      if (calls.renamedFrom.has(call)) {
        fates[calls.responseK[call]!] = Fate.Duplicate;
        const at = renamedEntry.get(call);
        if (at !== undefined) {
          // The displaced result was in a counted entry: its repair is listed there.
          const repair: RecoveryRepair = { type: 'dropped_duplicate_tool_result', callId: calls.ids[call]!, name: calls.renamedFrom.get(call)! };
          countedRepairs.push({ k: calls.responseK[call]!, entry: at, repair });
          renamedEntry.delete(call);
        }
        calls.renamedFrom.delete(call);
        calls.responseEntry[call] = -1;
      }
      // A part that is nothing but the result is already exactly what gets sent.
      if (calls.entry[call]! < keepFrom) {
        // Its result entry is counted, not kept: only that it is answered matters.
        calls.responses[call] = ANSWERED;
      } else if (share && isPlain(part!) && hasOnlyKey(part!, 'functionResponse')) {
        calls.responses[call] = part!;
        calls.responseEntry[call] = entryIndex;
      } else {
        calls.responses[call] = { functionResponse: cloneJson(response!) as FunctionResponse };
      }
    }
    if (call !== undefined && fates[k] === Fate.None) {
      // Adjacent: in the user entries between the call's model entry and the next model entry.
      const adjacent = role === 'user' && entryIndex < (nextModelIndex[calls.entry[call]!] ?? NONE);
      calls.hoisted[call] = adjacent ? 0 : 1;
      fates[k] = adjacent ? Fate.Kept : Fate.Hoisted;
    }
  };

  // (Holes in sparse arrays are skipped, as forEach would; they still take a number.)
  let k = 0;
  for (let entryIndex = 0; entryIndex < input.length; entryIndex++) {
    if (entryIndex === keepFrom) countedParts = k;
    const counting = entryIndex < keepFrom;
    // A counted entry the source has as a shape: the same steps on its ids, no parts made.
    const shaped = counting && input.shapeAt !== undefined ? input.shapeAt(entryIndex) : undefined;
    const entry = shaped === undefined ? input.at(entryIndex) : undefined;
    if (shaped === undefined && entry === undefined) continue;
    const role = shaped !== undefined ? shaped.role : entry!.role;
    const parts = shaped !== undefined ? shaped.shape.parts : entry!.parts;
    // What pass 2 keeps of each part of a shape, worked out once per shape (keptOf).
    const keptFacts = shaped !== undefined ? keptFactsOf(parts) : undefined;
    // The shape's next id (calls and results in part order, a part's call first).
    let slot = 0;
    // For a counted entry: how many parts pass 2 keeps, whether all are thoughts, whether it has calls.
    let keptCount = 0;
    let keptThoughtsOnly = true;
    hasCalls = false;
    idsInEntry = undefined;
    if (role === 'model') recentStart = calls.count;
    for (let partIndex = 0; partIndex < parts.length; partIndex++, k++) {
      const part = parts[partIndex]!;
      if (part === undefined && !(partIndex in parts)) continue;
      let dropped: RecoveryRepair | undefined;
      const call = part.functionCall;
      if (call) {
        const id = shaped === undefined || call.id === undefined ? call.id : shaped.shape.id(slot);
        if (shaped !== undefined) slot++;
        dropped = noteCall(k, entryIndex, role, id, call.name);
      }
      if (counting) {
        if (dropped !== undefined) countedRepairs.push({ k, entry: entryIndex, repair: dropped });
        const facts = keptFacts !== undefined ? keptFacts[partIndex]! >> (dropped !== undefined ? 2 : 0) : keptFactOf(part, dropped !== undefined);
        if ((facts & KEPT) !== 0) {
          keptCount++;
          if ((facts & KEPT_THOUGHT) === 0) keptThoughtsOnly = false;
        }
      }
      // A part may (corruptly) hold a call and a result at once: both are looked at.
      const response = part.functionResponse;
      if (!response) continue;
      if (shaped !== undefined) {
        const id = response.id === undefined ? undefined : shaped.shape.id(slot);
        slot++;
        noteResponse(k, entryIndex, role, id, response.name);
      } else noteResponse(k, entryIndex, role, response.id, response.name, part, response);
    }
    if (counting) counted[entryIndex] = (keptCount > 0 && (hasCalls || !keptThoughtsOnly) ? SENT : 0) | (role === 'model' ? MODEL : 0);
  }
  if (keepFrom >= input.length) countedParts = k;

  // Pass 2: rebuild in order, listing repairs as they are met walking forward.
  const history: Content[] = [];
  let skipped = 0;
  let keeping = keepFrom <= 0;
  const repairs: RecoveryRepair[] = [];
  const synthesizedCallIds: string[] = [];
  const syntheticParts = new Set<Part>();
  // What input entries before keepFrom give is counted, not kept.
  const emit = (entry: Content): void => {
    if (keeping) history.push(entry);
    else skipped++;
  };

  // The counted entries, from what pass 1 noted: their repairs in order, their number.
  countedRepairs.sort((a, b) => a.k - b.k);
  let nextRepair = 0;
  let nextCall = 0;
  for (let entryIndex = 0; entryIndex < counted.length; entryIndex++) {
    while (nextRepair < countedRepairs.length && countedRepairs[nextRepair]!.entry === entryIndex) repairs.push(countedRepairs[nextRepair++]!.repair);
    const first = nextCall;
    while (nextCall < calls.count && calls.entry[nextCall] === entryIndex) nextCall++;
    if ((counted[entryIndex]! & SENT) === 0) continue;
    skipped++;
    if ((counted[entryIndex]! & MODEL) === 0 || first === nextCall) continue;
    for (let call = first; call < nextCall; call++) listResult(call);
    skipped++;
  }

  /** Lists the repair of a call's result (hoisted, renamed, synthesized) and returns the result to send. */
  function listResult(call: number): Part {
    const id = calls.ids[call]!;
    const name = calls.names[call]!;
    const response = calls.responses[call];
    if (response) {
      if (calls.hoisted[call] === 1) repairs.push({ type: 'hoisted_tool_result', callId: id, name });
      const recordedName = calls.renamedFrom.get(call);
      if (recordedName !== undefined) repairs.push({ type: 'renamed_tool_result', callId: id, name, recordedName });
      return response;
    }
    repairs.push({ type: 'synthesized_tool_result', callId: id, name });
    synthesizedCallIds.push(id);
    const part = syntheticResultPart(id, name);
    syntheticParts.add(part);
    return part;
  }

  k = countedParts;
  for (let entryIndex = counted.length; entryIndex < input.length; entryIndex++) {
    const entry = input.at(entryIndex);
    if (entry === undefined) continue;
    if (entryIndex >= keepFrom) keeping = true;
    const parts = entry.parts;
    let entryCalls: number[] | undefined;
    // With shareUnchanged, `kept` stays null as long as every part so far stays as it
    // is (it would be a copy of parts[0, partIndex)); the first change builds it.
    let kept: Part[] | null = share ? null : [];
    for (let partIndex = 0; partIndex < parts.length; partIndex++, k++) {
      const part = parts[partIndex]!;
      if (part === undefined && !(partIndex in parts)) {
        kept ??= copyPrefix(parts, partIndex);
        continue;
      }
      const dropped = droppedCalls.size > 0 ? droppedCalls.get(k) : undefined;
      if (dropped) repairs.push(dropped);
      const response = part.functionResponse;
      if (response) {
        const fate = fates[k];
        const callId = response.id ?? '';
        if (fate === Fate.Duplicate) repairs.push({ type: 'dropped_duplicate_tool_result', callId, name: response.name });
        if (fate === Fate.Orphan) repairs.push({ type: 'dropped_orphan_tool_result', callId, name: response.name });
      }
      // Results travel separately (paired after their call); what is left of the part stays.
      const left = keptOf(part, dropped !== undefined);
      if (left === null) {
        // Nothing of it is sent here: a bare result, or an empty leftover ({}, only
        // thoughtSignature or thought:false, empty text).
        kept ??= copyPrefix(parts, partIndex);
        continue;
      }
      if (left === part) {
        // Nothing to take out: the part stays as it is (the common case).
        if (!share) kept!.push(cloneJson(part) as Part);
        else if (kept !== null) kept.push(part);
      } else {
        kept ??= copyPrefix(parts, partIndex);
        kept.push(cloneJson(left) as Part);
      }
      const at = callAt[k]!;
      if (at !== 0) (entryCalls ??= []).push(at - 1);
    }
    if (kept === null) {
      // Every part kept as it is: the entry itself when it is exactly { role, parts }.
      // Nothing but thoughts is not sent: a provider would get an empty turn.
      if (parts.length === 0 || (entryCalls === undefined && onlyThoughts(parts))) continue;
      emit(isBareEntry(entry) ? entry : { role: entry.role, parts: copyPrefix(parts, parts.length) });
    } else {
      if (kept.length === 0 || (entryCalls === undefined && onlyThoughts(kept))) continue;
      emit({ role: entry.role, parts: kept });
    }
    if (entry.role !== 'model' || entryCalls === undefined) continue;

    // One call whose result was a user entry of its own, taken as it is: that entry is the result entry.
    const only = entryCalls[0]!;
    if (entryCalls.length === 1 && calls.responseEntry[only]! >= 0 && calls.hoisted[only] === 0) {
      const source = input.at(calls.responseEntry[only]!)!;
      if (source.role === 'user' && source.parts.length === 1 && source.parts[0] === calls.responses[only] && isBareEntry(source)) {
        emit(source);
        continue;
      }
    }

    emit({ role: 'user', parts: entryCalls.map(listResult) });
  }

  const result: RepairResult = { history, repairs, synthesizedCallIds, syntheticParts };
  if (options.keepFrom !== undefined) result.skipped = skipped;
  return result;
}
