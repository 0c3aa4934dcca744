/** Terse builders for API histories and conversations in unit tests. */
import type { ConversationRecord } from '../../src/session/conversation.js';
import type { ReadResult } from '../../src/session/log-reader.js';
import type { ChatRecord, Content, Part } from '../../src/session/records.js';

export const text = (t: string): Part => ({ text: t });
export const call = (id: string | undefined, name = 'run_shell_command', args: Record<string, unknown> = { command: 'ls' }): Part => ({
  functionCall: id === undefined ? { name, args } : { id, name, args },
});
export const result = (id: string | undefined, name = 'run_shell_command', output = 'ok'): Part => ({
  functionResponse: id === undefined ? { name, response: { output } } : { id, name, response: { output } },
});
export const user = (...parts: Part[]): Content => ({ role: 'user', parts });
export const model = (...parts: Part[]): Content => ({ role: 'model', parts });

/** Builds a conversation whose chain is exactly these entries, written by mend or by another CLI. */
export function conversationOf(
  history: Content[],
  opts: { writtenByMend?: boolean; aborted?: 'sigint' | 'sigterm' | 'interrupt'; attempts?: number } = {},
): ConversationRecord {
  const sessionId = '11111111-2222-3333-4444-555555555555';
  const version = opts.writtenByMend === false ? '0.24.4' : 'mend/0.1.0';
  const records: ChatRecord[] = history.map((c, i) => {
    const base = {
      uuid: `r${i}`,
      parentUuid: i === 0 ? null : `r${i - 1}`,
      sessionId,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      cwd: '/tmp/p',
      version,
    };
    if (c.role === 'model') {
      return { ...base, type: 'assistant', provenance: 'assistant_output', model: 'm', message: { role: 'model', parts: c.parts } };
    }
    const isResult = c.parts.every((p) => p.functionResponse);
    return isResult
      ? { ...base, type: 'tool_result', provenance: 'tool_result', message: { role: 'user', parts: c.parts } }
      : { ...base, type: 'user', provenance: 'real_user', message: { role: 'user', parts: c.parts } };
  });
  const attempts = Array.from({ length: opts.attempts ?? 0 }, (_, k) => ({
    uuid: `rec${k}`,
    parentUuid: null,
    sessionId,
    timestamp: '2026-01-02T00:00:00.000Z',
    type: 'system' as const,
    subtype: 'recovery',
    systemPayload: { planId: `rp_${k}`, kind: 'interrupted_turn', repairs: [], timestamp: '2026-01-02T00:00:00.000Z' },
  }));
  return {
    sessionId,
    leafUuid: records.at(-1)?.uuid ?? null,
    records,
    compressedHistory: null,
    totalRecords: records.length,
    writtenByMend: opts.writtenByMend !== false,
    afterLastModel: {
      turnAborted: opts.aborted ? [{ uuid: 'ab', reason: opts.aborted }] : [],
      recoveryRecords: attempts,
    },
    recordedCwd: null,
  };
}

/** A full read that found exactly these records, one per line, in order. */
export function readOf(records: ChatRecord[], extra: Partial<ReadResult> = {}): ReadResult {
  return {
    records: records.map((record, i) => ({ line: i + 1, record })),
    diagnostics: [],
    sessionId: records[0]?.sessionId ?? null,
    bytes: 0,
    endsWithNewline: true,
    lines: records.length,
    ...extra,
  };
}
