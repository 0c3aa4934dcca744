/**
 * What of a part or a model entry a provider actually receives. Shared by the loader
 * (which markers follow the last model entry, who wrote the tail) and the recovery
 * service (classification, repair, validation), so both agree on one definition.
 *
 * A thought (`thought: true`) is the model's private reasoning: it is never an
 * answer. A part holding nothing but `thought: false`, a `thoughtSignature` or an
 * empty text is an empty leftover. A model entry with neither a call nor any other
 * content (mend writes a thought-only one when SIGINT lands while the model thinks)
 * answers nothing and closes nothing: it is treated as absent.
 */
import type { Part } from './records.js';

/** Keys that carry nothing on their own. */
function isEmptyKey(part: Record<string, unknown>, key: string): boolean {
  if (key === 'thoughtSignature') return true;
  if (key === 'thought') return part.thought !== true;
  if (key === 'text') return part.text === '';
  return false;
}

/** No own key with content: `{}`, `{thought: false}`, `{thoughtSignature}`, `{text: ""}`. */
export function isEmptyPart(part: Part): boolean {
  const obj = part as Record<string, unknown>;
  for (const key in obj) {
    if (!Object.hasOwn(obj, key)) continue;
    if (!isEmptyKey(obj, key)) return false;
  }
  return true;
}

/** A thought: `thought: true` and no call or result riding along. */
export function isThoughtPart(part: Part): boolean {
  return part.thought === true && part.functionCall === undefined && part.functionResponse === undefined;
}

/**
 * Whether this part of a model entry stays in it once a misplaced result is split off:
 * a call, or content that is neither a thought nor empty.
 */
export function isModelAnswerPart(part: Part): boolean {
  if (part.functionCall !== undefined) return true;
  if (part.functionResponse === undefined) return !isThoughtPart(part) && !isEmptyPart(part);
  const { functionResponse: _result, ...rest } = part;
  return !isThoughtPart(rest) && !isEmptyPart(rest);
}

/** A model entry that counts: it holds something a provider receives as the model's turn. */
export function isModelEntry(parts: readonly Part[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part !== undefined && isModelAnswerPart(part)) return true;
  }
  return false;
}

/**
 * Whether a model entry is still one once the repair has dropped its calls that have no
 * id (repair-history.ts drops those, and an entry left with nothing but thoughts): the
 * entries the last model entry of a repaired history can come from. A plan over an
 * outline reads whole everything from the last such entry on.
 */
export function keepsModelEntry(parts: readonly Part[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === undefined) continue;
    const call = part.functionCall;
    if (call !== undefined && (call.id === undefined || call.id === '')) {
      const { functionCall: _dropped, ...rest } = part;
      if (isModelAnswerPart(rest)) return true;
    } else if (isModelAnswerPart(part)) return true;
  }
  return false;
}
