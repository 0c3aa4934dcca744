/** Small pure predicates over Content parts, shared by classification and repair. */
import type { Part } from '../session/records.js';

export function isCall(part: Part): boolean {
  return part.functionCall !== undefined;
}

export function isResponse(part: Part): boolean {
  return part.functionResponse !== undefined;
}

/**
 * A user part that carries something a model should see again: not a tool result,
 * not a thought, not an empty text. Unknown part shapes (images, files) count.
 */
export function isRealUserContent(part: Part): boolean {
  if (isResponse(part) || isCall(part) || part.thought === true) return false;
  if (typeof part.text === 'string') return part.text.length > 0 || Object.keys(part).length > 1;
  return Object.keys(part).length > 0;
}
