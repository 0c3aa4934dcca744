/**
 * Fixtures and helpers of the store contract suite (test/support/store-contract.ts):
 * writer identities, fresh project scopes, corpus lines and the core's plan.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { buildPlanForSession } from '../../src/recovery/index.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { readSessionLog } from '../../src/session/log-reader.js';
import type { ProjectScope } from '../../src/store/session-store.js';
import { CORPUS_DIR } from './corpus.js';

export const WRITER = { host: 'contract-host-a', pid: process.pid };
export const OTHER = { host: 'contract-host-b', pid: process.pid };

export function scopeFor(label: string): ProjectScope {
  const root = `/work/contract/${label}-${randomUUID().slice(0, 8)}`;
  return { projectRoot: root, cwd: root };
}

export function fixtureLines(caseName: string): string[] {
  return readFileSync(join(CORPUS_DIR, caseName, 'session.jsonl'), 'utf8').split('\n');
}

/** The session id most of a fixture's records carry, as the reader decides (a fresh one for a file without records). */
export function sessionIdOf(lines: string[]): string {
  const counts = new Map<string, number>();
  for (const line of lines) {
    try {
      const id = (JSON.parse(line) as { sessionId?: unknown }).sessionId;
      if (typeof id === 'string' && id.length > 0) counts.set(id, (counts.get(id) ?? 0) + 1);
    } catch {
      // Not a record: look further.
    }
  }
  let best: string | undefined;
  for (const [id, n] of counts) if (best === undefined || n > counts.get(best)!) best = id;
  return best ?? randomUUID();
}

export async function planThroughCore(caseName: string) {
  const read = await readSessionLog(join(CORPUS_DIR, caseName, 'session.jsonl'));
  return { read, plan: buildPlanForSession(buildConversation(read)) };
}

export async function collect(writable: (w: PassThrough) => Promise<unknown>): Promise<Buffer> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  await writable(sink);
  return Buffer.concat(chunks);
}
