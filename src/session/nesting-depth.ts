/**
 * JSON.parse accepts any nesting depth, but JSON.stringify and structuredClone
 * overflow the stack past a few thousand levels, so such a record could never
 * be cloned, planned or sent to a provider. The reader rejects it up front.
 */
export const MAX_RECORD_DEPTH = 256;

/**
 * A value nested `max` levels deep needs at least `max` opening brackets, so a
 * line shorter than that cannot be too deep: the walk is skipped for almost
 * every line. The walk itself is iterative and never recurses.
 */
export function isTooDeep(value: unknown, lineLength: number, max = MAX_RECORD_DEPTH): boolean {
  if (lineLength < max) return false;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
