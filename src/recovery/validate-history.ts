/**
 * The invariants a provider needs, checked on the exact history that gets sent.
 * Tests, property tests and the engine (before every request) use this.
 */
import { isEmptyPart, isThoughtPart } from '../session/model-entry.js';
import type { Content } from '../session/records.js';

export type HistoryValidation = { ok: true } | { ok: false; problems: string[] };

export function validateProviderHistory(contents: readonly Content[]): HistoryValidation {
  const problems: string[] = [];
  // Indexes of user entries that are the result entry of the model entry before them.
  const resultEntries = new Set<number>();

  contents.forEach((entry, i) => {
    if (entry.role !== 'user' && entry.role !== 'model') problems.push(`entry ${i}: unknown role`);
    if (entry.parts.length === 0) problems.push(`entry ${i}: no parts`);
    // Leftovers a provider rejects or receives as an empty turn.
    if (entry.parts.some((p) => isEmptyPart(p))) problems.push(`entry ${i}: empty part`);
    if (entry.parts.length > 0 && entry.parts.every((p) => isThoughtPart(p))) problems.push(`entry ${i}: nothing but thoughts`);
    if (entry.role !== 'model') return;

    const callIds: string[] = [];
    const callNames: string[] = [];
    // Ids need only be unique per model entry: providers may reuse call_0 in every response.
    const seenCalls = new Set<string>();
    for (const part of entry.parts) {
      if (part.functionResponse) problems.push(`entry ${i}: tool result inside a model entry`);
      if (!part.functionCall) continue;
      const id = part.functionCall.id;
      if (id === undefined || id === '') {
        problems.push(`entry ${i}: call ${part.functionCall.name} has no id`);
        continue;
      }
      if (seenCalls.has(id)) problems.push(`entry ${i}: call id ${id} used twice in one entry`);
      seenCalls.add(id);
      callIds.push(id);
      callNames.push(part.functionCall.name);
    }
    if (callIds.length === 0) return;

    const next = contents[i + 1];
    if (!next || next.role !== 'user') {
      problems.push(`entry ${i}: calls ${callIds.join(', ')} are not answered by the next entry`);
      return;
    }
    resultEntries.add(i + 1);
    const answered = next.parts.map((p) => p.functionResponse?.id);
    if (next.parts.some((p) => !p.functionResponse)) {
      problems.push(`entry ${i + 1}: result entry holds parts other than tool results`);
    }
    if (answered.length !== callIds.length || answered.some((id, k) => id !== callIds[k])) {
      problems.push(`entry ${i + 1}: results [${answered.join(', ')}] do not answer calls [${callIds.join(', ')}] once each in order`);
    }
    // Providers pair a result with its call by id and function name.
    next.parts.forEach((p, k) => {
      const name = p.functionResponse?.name;
      if (name !== undefined && k < callNames.length && name !== callNames[k]) {
        problems.push(`entry ${i + 1}: result ${answered[k]} is named ${name}, its call ${callNames[k]}`);
      }
    });
  });

  contents.forEach((entry, i) => {
    if (entry.role !== 'user' || resultEntries.has(i)) return;
    if (entry.parts.some((p) => p.functionResponse)) problems.push(`entry ${i}: tool result without its call directly before`);
    if (entry.parts.some((p) => p.functionCall)) problems.push(`entry ${i}: call inside a user entry`);
  });

  return problems.length === 0 ? { ok: true } : { ok: false, problems };
}
