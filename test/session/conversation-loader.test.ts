import { describe, expect, it } from 'vitest';
import { buildConversation } from '../../src/session/conversation-loader.js';
import type { ChatRecord, Content } from '../../src/session/records.js';
import { readOf } from '../support/history.js';
import { SID, assistant, compression, system, toolResult, user } from './helpers.js';

const uuids = (records: ChatRecord[]) => records.map((r) => r.uuid);
const summary: Content[] = [
  { role: 'user', parts: [{ text: 'summary of earlier work' }] },
  { role: 'model', parts: [{ text: 'ok' }] },
];

describe('buildConversation', () => {
  it('an empty log gives no leaf, no records and no diagnostics', () => {
    const loaded = buildConversation(readOf([]), { fallbackSessionId: SID });
    expect(loaded).toEqual({
      conversation: {
        sessionId: SID,
        leafUuid: null,
        records: [],
        compressedHistory: null,
        totalRecords: 0,
        writtenByMend: false,
        afterLastModel: { turnAborted: [], recoveryRecords: [], turnFailed: [], endedBy: null },
        sidechainRecords: 0,
        recordedCwd: null,
      },
      historyGaps: [],
      diagnostics: [],
    });
  });

  it('walks the parent chain from the last record in file order, leaving other branches out', () => {
    const records = [
      user({ uuid: 'a' }),
      assistant({ uuid: 'b', parentUuid: 'a' }),
      user({ uuid: 'side', parentUuid: 'b' }), // abandoned branch
      user({ uuid: 'c', parentUuid: 'b' }),
      assistant({ uuid: 'd', parentUuid: 'c' }),
    ];
    const { conversation, historyGaps, diagnostics } = buildConversation(readOf(records));
    expect(conversation.leafUuid).toBe('d');
    expect(uuids(conversation.records)).toEqual(['a', 'b', 'c', 'd']);
    expect(conversation.totalRecords).toBe(5);
    expect(conversation.sessionId).toBe(SID);
    expect(historyGaps).toEqual([]);
    expect(diagnostics).toEqual([]);
  });

  it('the leaf is the last record in file order even when it is a system record', () => {
    const records = [
      user({ uuid: 'a' }),
      assistant({ uuid: 'b', parentUuid: 'a' }),
      system({ uuid: 't', parentUuid: 'b', subtype: 'ui_telemetry', payload: {} }),
    ];
    const { conversation } = buildConversation(readOf(records));
    expect(conversation.leafUuid).toBe('t');
    expect(uuids(conversation.records)).toEqual(['a', 'b', 't']);
  });

  it('a parent that names no record is a gap and ends the walk', () => {
    const records = [user({ uuid: 'a' }), user({ uuid: 'c', parentUuid: 'lost' }), assistant({ uuid: 'd', parentUuid: 'c' })];
    const { conversation, historyGaps } = buildConversation(readOf(records));
    expect(historyGaps).toEqual([{ childUuid: 'c', missingParentUuid: 'lost', beforeCheckpoint: false }]);
    expect(uuids(conversation.records)).toEqual(['c', 'd']);
  });

  it('a parent cycle ends the walk with a parent_cycle diagnostic', () => {
    const records = [user({ uuid: 'a', parentUuid: 'c' }), assistant({ uuid: 'b', parentUuid: 'a' }), user({ uuid: 'c', parentUuid: 'b' })];
    const { conversation, diagnostics, historyGaps } = buildConversation(readOf(records));
    expect(uuids(conversation.records)).toEqual(['a', 'b', 'c']);
    expect(diagnostics).toEqual([{ code: 'parent_cycle', uuid: 'c', beforeCheckpoint: false }]);
    expect(historyGaps).toEqual([]);
  });

  it('a record that is its own parent terminates too', () => {
    const { conversation, diagnostics } = buildConversation(readOf([user({ uuid: 'a', parentUuid: 'a' })]));
    expect(uuids(conversation.records)).toEqual(['a']);
    expect(diagnostics).toEqual([{ code: 'parent_cycle', uuid: 'a', beforeCheckpoint: false }]);
  });

  it('the latest chat_compression replaces all history before it', () => {
    const records = [
      user({ uuid: 'a' }),
      assistant({ uuid: 'b', parentUuid: 'a' }),
      compression({ uuid: 'k1', parentUuid: 'b', history: [{ role: 'user', parts: [{ text: 'old summary' }] }] }),
      user({ uuid: 'c', parentUuid: 'k1' }),
      compression({ uuid: 'k2', parentUuid: 'c', history: summary }),
      user({ uuid: 'd', parentUuid: 'k2' }),
      assistant({ uuid: 'e', parentUuid: 'd' }),
    ];
    const { conversation, historyGaps, diagnostics } = buildConversation(readOf(records));
    expect(conversation.compressedHistory).toEqual(summary);
    expect(uuids(conversation.records)).toEqual(['d', 'e']);
    expect(historyGaps).toEqual([]);
    expect(diagnostics).toEqual([]);
  });

  it('a gap or cycle behind the checkpoint is reported with beforeCheckpoint=true', () => {
    const gap = [user({ uuid: 'a', parentUuid: 'lost' }), compression({ uuid: 'k', parentUuid: 'a', history: summary }), user({ uuid: 'b', parentUuid: 'k' })];
    const g = buildConversation(readOf(gap));
    expect(g.historyGaps).toEqual([{ childUuid: 'a', missingParentUuid: 'lost', beforeCheckpoint: true }]);
    expect(uuids(g.conversation.records)).toEqual(['b']);

    const atCheckpoint = buildConversation(readOf([compression({ uuid: 'k', parentUuid: 'lost', history: summary }), user({ uuid: 'b', parentUuid: 'k' })]));
    expect(atCheckpoint.historyGaps).toEqual([{ childUuid: 'k', missingParentUuid: 'lost', beforeCheckpoint: true }]);

    const cycle = [
      user({ uuid: 'a', parentUuid: 'x' }),
      user({ uuid: 'x', parentUuid: 'a' }),
      compression({ uuid: 'k', parentUuid: 'a', history: summary }),
      user({ uuid: 'b', parentUuid: 'k' }),
    ];
    const c = buildConversation(readOf(cycle));
    expect(c.diagnostics).toEqual([{ code: 'parent_cycle', uuid: 'a', beforeCheckpoint: true }]);
    expect(uuids(c.conversation.records)).toEqual(['b']);
  });

  it('an invalid compression payload is reported and the record treated as an ordinary system record', () => {
    const records = [
      user({ uuid: 'a' }),
      system({ uuid: 'k', parentUuid: 'a', subtype: 'chat_compression', payload: { compressedHistory: 'nope' } }),
      user({ uuid: 'b', parentUuid: 'k' }),
    ];
    const { conversation, diagnostics } = buildConversation(readOf(records));
    expect(conversation.compressedHistory).toBeNull();
    expect(uuids(conversation.records)).toEqual(['a', 'k', 'b']);
    expect(diagnostics).toEqual([
      { code: 'invalid_system_payload', uuid: 'k', subtype: 'chat_compression', reason: 'compressedHistory: expected array, received string' },
    ]);
  });

  it('collects turn_aborted and recovery markers after the last assistant record only', () => {
    const recoveryPayload = { planId: 'p1', kind: 'interrupted_turn', repairs: [], timestamp: '2025-01-01T00:00:00Z' };
    const records = [
      user({ uuid: 'a' }),
      system({ uuid: 'old', parentUuid: 'a', subtype: 'turn_aborted', payload: { reason: 'sigint' } }),
      assistant({ uuid: 'b', parentUuid: 'old', callId: 'c1' }),
      toolResult({ uuid: 'r', parentUuid: 'b', callId: 'c1' }),
      system({ uuid: 'ta', parentUuid: 'r', subtype: 'turn_aborted', payload: { reason: 'sigterm' } }),
      system({ uuid: 'bad', parentUuid: 'ta', subtype: 'turn_aborted', payload: { reason: 'boredom' } }),
      system({ uuid: 'rec', parentUuid: 'bad', subtype: 'recovery', payload: recoveryPayload }),
    ];
    const { conversation, diagnostics } = buildConversation(readOf(records));
    expect(conversation.afterLastModel.turnAborted).toEqual([{ uuid: 'ta', reason: 'sigterm' }]);
    expect(uuids(conversation.afterLastModel.recoveryRecords)).toEqual(['rec']);
    expect(diagnostics).toEqual([{ code: 'invalid_system_payload', uuid: 'bad', subtype: 'turn_aborted', reason: expect.stringContaining('reason') }]);
  });

  it('with no assistant record, markers after the checkpoint count (and all of them without one)', () => {
    const noModel = [
      system({ uuid: 'x', subtype: 'turn_aborted', payload: { reason: 'interrupt' } }),
      compression({ uuid: 'k', parentUuid: 'x', history: summary }),
      user({ uuid: 'a', parentUuid: 'k' }),
      system({ uuid: 'y', parentUuid: 'a', subtype: 'turn_aborted', payload: { reason: 'sigint' } }),
    ];
    expect(buildConversation(readOf(noModel)).conversation.afterLastModel.turnAborted).toEqual([{ uuid: 'y', reason: 'sigint' }]);
    const plain = [user({ uuid: 'a' }), system({ uuid: 'y', parentUuid: 'a', subtype: 'turn_aborted', payload: { reason: 'sigint' } })];
    expect(buildConversation(readOf(plain)).conversation.afterLastModel.turnAborted).toEqual([{ uuid: 'y', reason: 'sigint' }]);
  });

  it('writtenByMend needs every versioned record on the chain to be mend and at least one versioned', () => {
    const build = (versions: Array<string | undefined>) =>
      buildConversation(
        readOf(versions.map((version, i) => user({ uuid: `u${i}`, parentUuid: i === 0 ? null : `u${i - 1}`, ...(version ? { version } : {}) }))),
      ).conversation.writtenByMend;
    expect(build(['mend/0.1.0', undefined, 'mend/0.2.0'])).toBe(true);
    expect(build(['0.24.4', 'mend/0.1.0'])).toBe(false);
    expect(build([undefined, undefined])).toBe(false);
    // Records off the chain do not count.
    const offChain = buildConversation(
      readOf([
        user({ uuid: 'a', version: 'mend/1' }),
        user({ uuid: 'q', parentUuid: 'a', version: '0.24.4' }),
        user({ uuid: 'b', parentUuid: 'a', version: 'mend/1' }),
      ]),
    );
    expect(offChain.conversation.writtenByMend).toBe(true);
  });

  it('writtenByMend looks only at the tail from the last assistant record on', () => {
    const qwenThenMend = [
      user({ uuid: 'u0', version: '0.24.4' }),
      assistant({ uuid: 'a0', parentUuid: 'u0', version: '0.24.4' }),
      user({ uuid: 'u1', parentUuid: 'a0', version: 'mend/0.1.0' }),
      assistant({ uuid: 'a1', parentUuid: 'u1', version: 'mend/0.1.0' }),
    ];
    expect(buildConversation(readOf(qwenThenMend)).conversation.writtenByMend).toBe(true);
    // A Qwen tail followed only by a mend record is still a Qwen crash.
    const qwenTail = [...qwenThenMend.slice(0, 2), user({ uuid: 'u1', parentUuid: 'a0', version: 'mend/0.1.0' })];
    expect(buildConversation(readOf(qwenTail)).conversation.writtenByMend).toBe(false);
  });

  it('keeps the read diagnostics, and uses the fallback session id only when no record names one', () => {
    const read = readOf([user({ uuid: 'a' })], { diagnostics: [{ code: 'malformed_line', line: 2 }] });
    const loaded = buildConversation(read, { fallbackSessionId: 'other' });
    expect(loaded.diagnostics).toEqual([{ code: 'malformed_line', line: 2 }]);
    expect(loaded.conversation.sessionId).toBe(SID);
  });
});

describe('buildConversation: sidechains, the leaf and the markers that end a tail', () => {
  it('subagent records (isSidechain, or a Qwen agentId) are set aside: never the leaf, never on the chain', () => {
    const records = [
      user({ uuid: 'a' }),
      assistant({ uuid: 'b', parentUuid: 'a' }),
      { ...assistant({ uuid: 's1', callId: 'c9' }), isSidechain: true },
      { ...user({ uuid: 's2', parentUuid: 's1' }), agentId: 'sub' },
      { ...user({ uuid: 'm', parentUuid: 'b' }), isSidechain: false, agentId: 'main-has-no-agent-but-says-so' },
    ];
    const { conversation } = buildConversation(readOf(records));
    expect(conversation.sidechainRecords).toBe(2);
    expect(conversation.leafUuid).toBe('m');
    expect(uuids(conversation.records)).toEqual(['a', 'b', 'm']);
  });

  it('the leaf is the record of the last record line, also when that line is a late fragment', () => {
    const read = readOf([user({ uuid: 'a' }), assistant({ uuid: 'b', parentUuid: 'a' }), user({ uuid: 'c', parentUuid: 'b' })]);
    read.records[1]!.lastLine = 4;
    const { conversation } = buildConversation(read);
    expect(conversation.leafUuid).toBe('b');
    expect(uuids(conversation.records)).toEqual(['a', 'b']);
  });

  it('markers are counted after the last model entry: an empty or thought-only assistant record does not reset them', () => {
    const records: ChatRecord[] = [
      user({ uuid: 'a' }),
      assistant({ uuid: 'b', parentUuid: 'a', callId: 'c1' }),
      system({
        uuid: 'rec',
        parentUuid: 'b',
        subtype: 'recovery',
        payload: { planId: 'rp_1', kind: 'interrupted_turn', repairs: [{ type: 'from_the_future' }], timestamp: 't' },
      }),
      { ...assistant({ uuid: 'e', parentUuid: 'rec' }), message: { role: 'model', parts: [] } } as ChatRecord,
      { ...assistant({ uuid: 't', parentUuid: 'e' }), message: { role: 'model', parts: [{ text: 'hmm', thought: true }] } } as ChatRecord,
      system({ uuid: 'tf', parentUuid: 't', subtype: 'turn_failed', payload: { code: 'provider_error', message: 'HTTP 500' } }),
    ];
    const { conversation, diagnostics } = buildConversation(readOf(records));
    expect(uuids(conversation.afterLastModel.recoveryRecords)).toEqual(['rec']);
    expect(conversation.afterLastModel.turnFailed).toEqual([{ uuid: 'tf', code: 'provider_error', message: 'HTTP 500' }]);
    expect(conversation.afterLastModel.endedBy).toEqual({ subtype: 'turn_failed', uuid: 'tf' });
    expect(diagnostics).toEqual([]);
  });

  it('a recovery record whose payload fails even the tolerant check still counts, and is reported', () => {
    const records = [user({ uuid: 'a' }), system({ uuid: 'rec', parentUuid: 'a', subtype: 'recovery', payload: 42 })];
    const { conversation, diagnostics } = buildConversation(readOf(records));
    expect(conversation.afterLastModel.recoveryRecords).toHaveLength(1);
    expect(diagnostics.map((d) => d.code)).toEqual(['invalid_system_payload']);
  });

  it('an abort marker followed by a new prompt no longer ends the tail', () => {
    const records = [
      user({ uuid: 'a' }),
      assistant({ uuid: 'b', parentUuid: 'a' }),
      system({ uuid: 'ab', parentUuid: 'b', subtype: 'turn_aborted', payload: { reason: 'sigint' } }),
      user({ uuid: 'c', parentUuid: 'ab' }),
    ];
    const { conversation } = buildConversation(readOf(records));
    expect(conversation.afterLastModel.turnAborted).toEqual([{ uuid: 'ab', reason: 'sigint' }]);
    expect(conversation.afterLastModel.endedBy).toBeNull();
  });

  it('a result written after the abort marker is a late write of the stopped turn: the marker still ends the tail', () => {
    const records = [
      user({ uuid: 'a' }),
      assistant({ uuid: 'b', parentUuid: 'a', callId: 'c1' }),
      system({ uuid: 'ab', parentUuid: 'b', subtype: 'turn_aborted', payload: { reason: 'sigterm' } }),
      toolResult({ uuid: 'r', parentUuid: 'ab', callId: 'c1' }),
    ];
    expect(buildConversation(readOf(records)).conversation.afterLastModel.endedBy).toEqual({ subtype: 'turn_aborted', uuid: 'ab' });
  });
});
