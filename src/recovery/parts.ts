/** Small pure predicates over Content parts, shared by classification and repair. */
import { isEmptyPart } from '../session/model-entry.js';
import type { Part } from '../session/records.js';

export function isCall(part: Part): boolean {
  return part.functionCall !== undefined;
}

export function isResponse(part: Part): boolean {
  return part.functionResponse !== undefined;
}

/**
 * A user part that carries something a model should see again: not a tool result,
 * not a thought, not an empty leftover (empty text, only a thoughtSignature or
 * thought:false). Unknown part shapes (images, files) count.
 */
export function isRealUserContent(part: Part): boolean {
  if (isResponse(part) || isCall(part) || part.thought === true) return false;
  return !isEmptyPart(part);
}
