import { describe, expect, it } from 'vitest';
import { buildApiHistory, cloneJson } from '../../src/session/api-history.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import type { ChatRecord, Content } from '../../src/session/records.js';
import { readOf } from '../support/history.js';
import { assistant, compression, system, toolResult, user } from './helpers.js';

function conversationOf(records: ChatRecord[]) {
  return buildConversation(readOf(records)).conversation;
}

describe('buildApiHistory', () => {
  it('maps user and tool_result to role user, assistant to model, and leaves system records out', () => {
    const records = [
      user({ uuid: 'a', text: 'hi' }),
      system({ uuid: 's1', parentUuid: 'a', subtype: 'ui_telemetry', payload: {} }),
      assistant({ uuid: 'b', parentUuid: 's1', callId: 'c1' }),
      toolResult({ uuid: 'r', parentUuid: 'b', callId: 'c1' }),
      system({ uuid: 's2', parentUuid: 'r', subtype: 'turn_aborted', payload: { reason: 'sigint' } }),
    ];
    expect(buildApiHistory(conversationOf(records))).toEqual([
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'read_file', args: { file_path: '/x' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'read_file', response: { output: 'ok' } } }] },
    ]);
  });

  it('starts with the compressed history and skips records with no parts; no merging of same-role entries', () => {
    const summary: Content[] = [{ role: 'user', parts: [{ text: 'summary' }] }];
    const empty = { ...user({ uuid: 'e', parentUuid: 'k' }), message: { role: 'user', parts: [] } } as ChatRecord;
    const records = [
      user({ uuid: 'a', text: 'forgotten' }),
      compression({ uuid: 'k', parentUuid: 'a', history: summary }),
      empty,
      user({ uuid: 'b', parentUuid: 'e', text: 'next' }),
    ];
    expect(buildApiHistory(conversationOf(records))).toEqual([
      { role: 'user', parts: [{ text: 'summary' }] },
      { role: 'user', parts: [{ text: 'next' }] },
    ]);
  });

  it('returns a deep clone: mutating the history does not touch the records', () => {
    const conv = conversationOf([
      user({ uuid: 'a', text: 'original' }),
      compression({ uuid: 'k', parentUuid: 'a', history: [{ role: 'model', parts: [{ text: 'sum' }] }] }),
      user({ uuid: 'b', parentUuid: 'k', text: 'kept' }),
    ]);
    const history = buildApiHistory(conv);
    history[0]!.parts[0]!.text = 'changed';
    history[1]!.parts[0]!.text = 'changed';
    history[1]!.parts.push({ text: 'extra' });
    expect(conv.compressedHistory).toEqual([{ role: 'model', parts: [{ text: 'sum' }] }]);
    const b = conv.records[0]!;
    expect(b.type === 'user' && b.message.parts).toEqual([{ text: 'kept' }]);
  });
});

describe('cloneJson', () => {
  it('deep-copies plain data, keeps a __proto__ key as data, and handles deep nesting', () => {
    const source = JSON.parse('{"a":[1,{"b":null}],"__proto__":{"polluted":true},"s":"x"}') as Record<string, unknown>;
    const copy = cloneJson(source) as Record<string, unknown>;
    expect(copy).toEqual(source);
    expect(copy).not.toBe(source);
    expect(copy.a).not.toBe(source.a);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['a', '__proto__', 's']);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 1000; i++) deep = [deep];
    expect(cloneJson(deep)).toEqual(deep);
  });
});
