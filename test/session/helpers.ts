import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { ChatRecord, Content } from '../../src/session/records.js';

export const SID = '11111111-2222-4333-8444-555555555555';
export const OTHER_SID = '99999999-2222-4333-8444-555555555555';

/** A fresh temp folder per call, removed after the test. */
export function useTempDirs(): () => string {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'mend-session-test-'));
    made.push(dir);
    return dir;
  };
}

interface Base {
  uuid: string;
  parentUuid?: string | null;
  sessionId?: string;
  version?: string;
}

function base(b: Base) {
  return {
    uuid: b.uuid,
    parentUuid: b.parentUuid ?? null,
    sessionId: b.sessionId ?? SID,
    timestamp: '2025-01-01T00:00:00.000Z',
    ...(b.version !== undefined ? { version: b.version } : {}),
  };
}

export function user(b: Base & { text?: string }): ChatRecord {
  return { ...base(b), type: 'user', provenance: 'real_user', message: { role: 'user', parts: [{ text: b.text ?? `user ${b.uuid}` }] } };
}

export function assistant(b: Base & { text?: string; callId?: string }): ChatRecord {
  const parts = b.callId ? [{ functionCall: { id: b.callId, name: 'read_file', args: { file_path: '/x' } } }] : [{ text: b.text ?? `model ${b.uuid}` }];
  return { ...base(b), type: 'assistant', provenance: 'assistant_output', model: 'm', message: { role: 'model', parts } };
}

export function toolResult(b: Base & { callId: string }): ChatRecord {
  return {
    ...base(b),
    type: 'tool_result',
    provenance: 'tool_result',
    message: { role: 'user', parts: [{ functionResponse: { id: b.callId, name: 'read_file', response: { output: 'ok' } } }] },
    toolCallResult: { callId: b.callId, status: 'success' },
  };
}

export function system(b: Base & { subtype: string; payload?: unknown }): ChatRecord {
  return { ...base(b), type: 'system', provenance: 'system', subtype: b.subtype, systemPayload: b.payload };
}

export function compression(b: Base & { history: Content[] }): ChatRecord {
  return system({ ...b, subtype: 'chat_compression', payload: { info: {}, compressedHistory: b.history } });
}

export function jsonl(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r) + '\n').join('');
}
