/** The one ACP mapping (ACP and the daemon): prompt blocks to parts, recorded history to a replay, runtime events to updates. */
import { describe, expect, it } from 'vitest';
import { planText } from '../../../src/frontends/acp/recovery-text.js';
import { liveUpdates, replayUpdates, stopReasonOf } from '../../../src/frontends/shared/acp-updates.js';
import { promptCommand, promptParts } from '../../../src/frontends/shared/prompt-parts.js';
import { SYNTHETIC_RESULT_REASON } from '../../../src/recovery/synthetic-result.js';
import type { LoadedSession } from '../../../src/session/conversation.js';
import { buildConversation } from '../../../src/session/conversation-loader.js';
import type { ChatRecord } from '../../../src/session/records.js';

function loaded(records: Array<Record<string, unknown>>): LoadedSession {
  let parent: string | null = null;
  const chained = records.map((r, i) => {
    const record = { uuid: `r${i}`, parentUuid: parent, sessionId: 's', timestamp: `2026-01-01T10:00:0${i}.000Z`, version: 'mend/0.1.0', ...r } as ChatRecord;
    parent = record.uuid;
    return { line: i + 1, record };
  });
  return buildConversation({ sessionId: 's', records: chained, diagnostics: [] } as unknown as Parameters<typeof buildConversation>[0]);
}

describe('ACP mapping', () => {
  it('prompt blocks become parts; images as inlineData; commands are exact text', () => {
    expect(
      promptParts([
        { type: 'text', text: 'look' },
        { type: 'image', mimeType: 'image/png', data: 'AAAA' },
        { type: 'resource_link', name: 'a.ts', uri: 'file:///p/a.ts' },
        { type: 'resource', resource: { uri: 'file:///p/b.ts', text: 'const b = 1;' } },
      ]),
    ).toEqual([
      { text: 'look' },
      { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
      { text: '[a.ts](file:///p/a.ts)' },
      { text: '<context uri="file:///p/b.ts">\nconst b = 1;\n</context>' },
    ]);
    expect(promptCommand([{ type: 'text', text: ' /continue\n' }])).toBe('/continue');
    expect(
      promptCommand([
        { type: 'text', text: '/continue' },
        { type: 'image', mimeType: 'image/png', data: 'A' },
      ]),
    ).toBeNull();
  });

  it('replays each call once: recorded results with their status, synthetic or missing ones as outcome unknown', () => {
    const updates = replayUpdates(
      loaded([
        { type: 'user', message: { role: 'user', parts: [{ text: 'go' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] } },
        {
          type: 'assistant',
          message: {
            role: 'model',
            parts: [
              { text: 'thinking', thought: true },
              { text: 'ok' },
              { functionCall: { id: 'ok', name: 'read_file', args: { file_path: '/p/a' } } },
              { functionCall: { id: 'bad', name: 'run_shell_command', args: { command: 'false' } } },
              { functionCall: { id: 'synth', name: 'run_shell_command', args: { command: 'x' } } },
              { functionCall: { id: 'gone', name: 'write_file', args: { file_path: '/p/b', content: '' } } },
            ],
          },
        },
        { type: 'tool_result', message: { role: 'user', parts: [{ functionResponse: { id: 'ok', name: 'read_file', response: { output: 'A' } } }] } },
        {
          type: 'tool_result',
          message: { role: 'user', parts: [{ functionResponse: { id: 'bad', name: 'run_shell_command', response: { error: 'exit 1' } } }] },
        },
        {
          type: 'tool_result',
          recovery: { planId: 'rp_1', synthetic: true },
          message: { role: 'user', parts: [{ functionResponse: { id: 'synth', name: 'run_shell_command', response: { error: SYNTHETIC_RESULT_REASON } } }] },
        },
      ]).conversation,
    );
    expect(updates.map((u) => u.sessionUpdate)).toEqual([
      'user_message_chunk',
      'user_message_chunk',
      'agent_thought_chunk',
      'agent_message_chunk',
      'tool_call',
      'tool_call',
      'tool_call',
      'tool_call',
    ]);
    expect(updates[1]).toMatchObject({ content: { type: 'image', mimeType: 'image/png', data: 'AAAA' } });
    const calls = updates.filter((u) => u.sessionUpdate === 'tool_call');
    expect(calls.map((u) => [u.toolCallId, u.status, u.kind])).toEqual([
      ['ok', 'completed', 'read'],
      ['bad', 'failed', 'execute'],
      ['synth', 'failed', 'execute'],
      ['gone', 'failed', 'edit'],
    ]);
    expect(calls[2]!._meta).toEqual({ toolName: 'run_shell_command', mend: { outcomeUnknown: true, resultRecorded: true } });
    expect(calls[3]!._meta).toEqual({ toolName: 'write_file', mend: { outcomeUnknown: true, resultRecorded: false } });
    expect(JSON.stringify(calls[3]!.content)).toContain('The outcome is unknown');
  });

  it('live events: a pending call when the response is recorded, then in progress, then its outcome', () => {
    const call = { id: 'c', name: 'run_shell_command', args: { command: 'ls' } };
    expect(
      liveUpdates({
        type: 'assistant_message',
        uuid: 'u',
        messageId: 'm',
        model: 'x',
        parts: [{ functionCall: call }],
        stopReason: 'tool_use',
        usage: { inputTokens: 0, outputTokens: 0 },
      }),
    ).toEqual([
      {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: '' },
        messageId: 'm',
        _meta: { usage: { inputTokens: 0, outputTokens: 0 }, stopReason: 'tool_use' },
      },
      {
        sessionUpdate: 'tool_call',
        toolCallId: 'c',
        title: 'run_shell_command: ls',
        kind: 'execute',
        status: 'pending',
        rawInput: { command: 'ls' },
        _meta: { toolName: 'run_shell_command' },
      },
    ]);
    expect(liveUpdates({ type: 'tool_call_started', call })).toEqual([{ sessionUpdate: 'tool_call_update', toolCallId: 'c', status: 'in_progress' }]);
    const done = liveUpdates({
      type: 'tool_call_finished',
      uuid: 'r',
      call,
      status: 'cancelled',
      isError: true,
      output: 'aborted',
      result: { functionResponse: { id: 'c', name: 'run_shell_command', response: { error: 'aborted' } } },
    });
    expect(done).toMatchObject([{ sessionUpdate: 'tool_call_update', toolCallId: 'c', status: 'failed', _meta: { mend: { outcome: 'cancelled' } } }]);
    expect(liveUpdates({ type: 'turn_started', trigger: 'prompt' })).toEqual([]);
    const outcome = { durationMs: 0, apiDurationMs: 0, numTurns: 1, usage: { inputTokens: 0, outputTokens: 0 }, permissionDenials: [] };
    expect(stopReasonOf({ ...outcome, status: 'aborted' })).toBe('cancelled');
    expect(stopReasonOf({ ...outcome, status: 'max_turns' })).toBe('max_turn_requests');
    expect(planText(null)).toContain('no records');
  });
});
