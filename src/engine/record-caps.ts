/**
 * A single record must stay loadable and sendable: a runaway model response or a
 * huge piped prompt is cut, with a marker saying so, before it is recorded. Tool
 * output has its own (smaller) cap in src/tools.
 */
import type { Part } from '../session/records.js';

export const MAX_TEXT_PART_BYTES = 1024 * 1024;

export function truncationNotice(omittedBytes: number): string {
  return `\n[mend: ${omittedBytes} bytes of text omitted to keep the session record under ${MAX_TEXT_PART_BYTES} bytes]`;
}

/** Returns the parts with every text part cut to `maxBytes` (UTF-8), marked where cut. */
export function capTextParts(parts: readonly Part[], maxBytes = MAX_TEXT_PART_BYTES): Part[] {
  return parts.map((part) => {
    // Most text is far below the cap; only measure bytes when the length could exceed it.
    if (typeof part.text !== 'string' || part.text.length * 3 <= maxBytes) return part;
    const bytes = Buffer.from(part.text, 'utf8');
    if (bytes.length <= maxBytes) return part;
    // Cut on a character boundary: decoding a prefix may end in a replacement char, drop it.
    let kept = bytes.subarray(0, maxBytes).toString('utf8');
    if (kept.endsWith('\uFFFD')) kept = kept.slice(0, -1);
    return { ...part, text: kept + truncationNotice(bytes.length - Buffer.byteLength(kept)) };
  });
}
