/**
 * Which agent wrote a file: each adapter sniffs the head, in a fixed order, from
 * the content alone. Null for a file in no format mend knows (mend's own logs
 * included: those are the session store's).
 */
import { createHash } from 'node:crypto';
import type { ForeignAdapter, ForeignAgent, ForeignSession } from './adapter.js';
import { SNIFF_BYTES } from './adapter.js';
import { claudeAdapter } from './claude/read-claude.js';
import { codexAdapter } from './codex/read-codex.js';
import { geminiAdapter } from './gemini/read-gemini.js';

export const FOREIGN_ADAPTERS: readonly ForeignAdapter[] = [codexAdapter, geminiAdapter, claudeAdapter];

export function detectForeign(head: Buffer): ForeignAdapter | null {
  const slice = head.length > SNIFF_BYTES ? head.subarray(0, SNIFF_BYTES) : head;
  return FOREIGN_ADAPTERS.find((a) => a.sniff(slice)) ?? null;
}

export function adapterFor(agent: ForeignAgent): ForeignAdapter {
  return FOREIGN_ADAPTERS.find((a) => a.agent === agent)!;
}

/** A foreign session with what identifies the bytes it was read from. */
export interface ForeignRead extends ForeignSession {
  /** SHA-256 of the bytes read, hex. */
  sha256: string;
}

/** The file's bytes read by the adapter that recognises them, or null when none does. */
export function readForeign(bytes: Buffer): ForeignRead | null {
  const adapter = detectForeign(bytes);
  if (adapter === null) return null;
  return { ...adapter.read(bytes), sha256: createHash('sha256').update(bytes).digest('hex') };
}
