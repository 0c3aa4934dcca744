/**
 * Small valid records for store tests; free of vitest so that child processes
 * (test/support/pg-writer-process.ts) can use it too.
 */
import type { ChatRecord } from '../../src/session/records.js';

/** A minimal valid record for ordering and listing tests. */
export function record(sessionId: string, n: number, parentUuid: string | null, timestamp: string, text = `prompt ${n}`): ChatRecord {
  return {
    uuid: `${sessionId.slice(0, 8)}-u${n}`,
    parentUuid,
    sessionId,
    timestamp,
    type: 'user',
    provenance: 'real_user',
    cwd: '/work',
    version: 'mend/0.1.0',
    message: { role: 'user', parts: [{ text }] },
  } as ChatRecord;
}
