import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import { readSessionLog } from '../../src/session/log-reader.js';
import { MAX_RECORD_DEPTH } from '../../src/session/nesting-depth.js';
import { OTHER_SID, SID, assistant, jsonl, system, useTempDirs, user } from './helpers.js';

const tempDir = useTempDirs();

function logWith(content: string | Buffer): string {
  const file = join(tempDir(), `${SID}.jsonl`);
  writeFileSync(file, content);
  return file;
}

describe('readSessionLog', () => {
  it('reads valid records in file order with their line numbers', async () => {
    const a = user({ uuid: 'a' });
    const b = assistant({ uuid: 'b', parentUuid: 'a' });
    const r = await readSessionLog(logWith(jsonl([a, b])));
    expect(r.records).toEqual([
      { line: 1, record: a },
      { line: 2, record: b },
    ]);
    expect(r.diagnostics).toEqual([]);
    expect(r.sessionId).toBe(SID);
    expect(r.endsWithNewline).toBe(true);
    expect(r.lines).toBe(2);
    expect(r.bytes).toBe(Buffer.byteLength(jsonl([a, b])));
  });

  it('an empty file has no records, no diagnostics and no session id', async () => {
    const r = await readSessionLog(logWith(''));
    expect(r).toEqual({ records: [], diagnostics: [], sessionId: null, bytes: 0, endsWithNewline: false, lines: 0 });
  });

  it('reports a torn tail (no final newline, last line not JSON) with its line and byte count', async () => {
    const a = user({ uuid: 'a' });
    const torn = '{"uuid":"b","parentUuid":"a","sess';
    const r = await readSessionLog(logWith(jsonl([a]) + torn));
    expect(r.records.map((x) => x.record.uuid)).toEqual(['a']);
    expect(r.diagnostics).toEqual([{ code: 'torn_tail', line: 2, bytes: Buffer.byteLength(torn) }]);
    expect(r.endsWithNewline).toBe(false);
    expect(r.lines).toBe(2);
  });

  it('a parsable last line without a newline is a valid record, not a torn tail', async () => {
    const a = user({ uuid: 'a' });
    const b = assistant({ uuid: 'b', parentUuid: 'a' });
    const r = await readSessionLog(logWith(jsonl([a]) + JSON.stringify(b)));
    expect(r.records.map((x) => [x.line, x.record.uuid])).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    expect(r.diagnostics).toEqual([]);
    expect(r.endsWithNewline).toBe(false);
  });

  it('the same unparsable bytes followed by a newline are a malformed line, not a torn tail', async () => {
    const r = await readSessionLog(logWith(jsonl([user({ uuid: 'a' })]) + '{"uuid":"b",\n'));
    expect(r.diagnostics).toEqual([{ code: 'malformed_line', line: 2 }]);
  });

  it('reports a garbage middle line by its 1-based number, skips blank lines silently and keeps reading', async () => {
    const a = user({ uuid: 'a' });
    const c = assistant({ uuid: 'c', parentUuid: 'a' });
    const content = JSON.stringify(a) + '\n\n   \nnot json at all\n' + JSON.stringify(c) + '\n';
    const r = await readSessionLog(logWith(content));
    expect(r.records.map((x) => [x.line, x.record.uuid])).toEqual([
      [1, 'a'],
      [5, 'c'],
    ]);
    expect(r.diagnostics).toEqual([{ code: 'malformed_line', line: 4 }]);
    expect(r.lines).toBe(5);
  });

  it('reports JSON that fails the record schema as invalid_record with a readable reason', async () => {
    const bad = { ...user({ uuid: 'b', parentUuid: 'a' }), message: { role: 'user', parts: [{ text: 42 }] } };
    const r = await readSessionLog(logWith(jsonl([user({ uuid: 'a' }), bad, { type: 'nonsense' }, 7])));
    expect(r.records.map((x) => x.record.uuid)).toEqual(['a']);
    expect(r.diagnostics).toEqual([
      { code: 'invalid_record', line: 2, reason: 'message.parts.0.text: expected string, received number' },
      { code: 'invalid_record', line: 3, reason: expect.stringContaining('type: Invalid discriminator value') },
      { code: 'invalid_record', line: 4, reason: '(record): expected object, received number' },
    ]);
  });

  it('rejects a record nested deeper than MAX_RECORD_DEPTH, also when Object.prototype has an enumerable key', async () => {
    // A value in a record `depth` levels deep (the record itself is level 1, its "deep" field's array level 2).
    const nested = (uuid: string, depth: number) => ({ ...user({ uuid }), deep: JSON.parse(`${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}`) as unknown });
    const read = async () => (await readSessionLog(logWith(jsonl([nested('a', MAX_RECORD_DEPTH), nested('b', MAX_RECORD_DEPTH + 1)])))).diagnostics;
    const expected = [{ code: 'invalid_record', line: 2, reason: `nested deeper than ${MAX_RECORD_DEPTH} levels` }];
    expect(await read()).toEqual(expected);
    // Inherited keys are no part of a record: a deep inherited value makes no shallow record too deep.
    Object.defineProperty(Object.prototype, 'inheritedDeep', {
      value: nested('x', MAX_RECORD_DEPTH + 5),
      enumerable: true,
      configurable: true,
      writable: true,
    });
    try {
      expect(await read()).toEqual(expected);
    } finally {
      delete (Object.prototype as { inheritedDeep?: unknown }).inheritedDeep;
    }
  });

  it('leaves out and reports records of another session than the first valid record', async () => {
    const a = user({ uuid: 'a' });
    const foreign = assistant({ uuid: 'x', parentUuid: 'a', sessionId: OTHER_SID });
    const b = assistant({ uuid: 'b', parentUuid: 'a' });
    const r = await readSessionLog(logWith(jsonl([a, foreign, b])));
    expect(r.records.map((x) => x.record.uuid)).toEqual(['a', 'b']);
    expect(r.diagnostics).toEqual([{ code: 'mixed_session_id', line: 2, sessionId: OTHER_SID }]);
    expect(r.sessionId).toBe(SID);
  });

  it('the first VALID record sets the session id, not an earlier invalid one', async () => {
    const invalid = { uuid: 'z', sessionId: OTHER_SID, type: 'user' };
    const r = await readSessionLog(logWith(jsonl([invalid, user({ uuid: 'a' })])));
    expect(r.sessionId).toBe(SID);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['invalid_record']);
  });

  it('handles CRLF line endings', async () => {
    const a = user({ uuid: 'a' });
    const b = assistant({ uuid: 'b', parentUuid: 'a' });
    const content = `${JSON.stringify(a)}\r\n\r\n${JSON.stringify(b)}\r\n`;
    const r = await readSessionLog(logWith(content));
    expect(r.records.map((x) => x.record)).toEqual([a, b]);
    expect(r.diagnostics).toEqual([]);
    expect(r.lines).toBe(3);
  });

  it("merges fragments sharing a uuid as Qwen Code does: parts concatenate, the first piece's fields win (usage: the last), first position kept", async () => {
    const first = { ...assistant({ uuid: 'b', parentUuid: 'a', text: 'one' }), model: 'early', usageMetadata: { n: 1 } };
    const second = { ...assistant({ uuid: 'b', parentUuid: 'a', text: 'two' }), model: 'late' };
    const c = user({ uuid: 'c', parentUuid: 'b' });
    const r = await readSessionLog(logWith(jsonl([user({ uuid: 'a' }), first, c, second])));
    expect(r.records.map((x) => [x.line, x.record.uuid])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    const merged = r.records[1]!.record;
    expect(merged).toMatchObject({ model: 'early', usageMetadata: { n: 1 } });
    expect(merged.type === 'assistant' && merged.message.parts).toEqual([{ text: 'one' }, { text: 'two' }]);
    // The last record line is the late piece of b: the loader takes b as the leaf.
    expect(r.records[1]!.lastLine).toBe(4);
    expect(r.diagnostics).toEqual([]);
  });

  it('a uuid reused by a record of another type: the first keeps it, the other is reported whole', async () => {
    const sys = system({ uuid: 'a', subtype: 'x', payload: 42 });
    const u = user({ uuid: 'a' });
    const r = await readSessionLog(logWith(jsonl([sys, u])));
    expect(r.records).toEqual([{ line: 1, record: sys, lastLine: 2 }]);
    expect(r.diagnostics).toEqual([{ code: 'conflicting_uuid', line: 2, uuid: 'a', keptType: 'system', type: 'user', record: u }]);
  });

  it('an identical repeated line is one record (reported), not a second fragment', async () => {
    const a = user({ uuid: 'a', text: 'run the tests' });
    const r = await readSessionLog(logWith(jsonl([a, a])));
    expect(r.records).toEqual([{ line: 1, record: a, lastLine: 2 }]);
    expect(r.diagnostics).toEqual([{ code: 'repeated_line', line: 2, uuid: 'a' }]);
  });

  it("a later fragment with another parent keeps the first piece's parent (reported)", async () => {
    const one = assistant({ uuid: 'b', parentUuid: 'a', text: 'one' });
    const two = assistant({ uuid: 'b', parentUuid: 'zz', text: 'two' });
    const r = await readSessionLog(logWith(jsonl([user({ uuid: 'a' }), one, two])));
    expect(r.records[1]!.record.parentUuid).toBe('a');
    expect(r.diagnostics).toEqual([{ code: 'conflicting_parent_uuid', line: 3, uuid: 'b', keptParentUuid: 'a', parentUuid: 'zz' }]);
  });

  it("the session is the records' majority, or the file name's id: a foreign first line does not hide it", async () => {
    const OTHER = '99999999-8888-4777-8666-555555555555';
    const foreign = { ...user({ uuid: 'x' }), sessionId: OTHER };
    const content = jsonl([foreign, user({ uuid: 'a' }), assistant({ uuid: 'b', parentUuid: 'a' })]);
    const r = await readSessionLog(logWith(content));
    expect(r.sessionId).toBe(SID);
    expect(r.records.map((x) => x.record.uuid)).toEqual(['a', 'b']);
    expect(r.diagnostics).toEqual([{ code: 'mixed_session_id', line: 1, sessionId: OTHER }]);
    const named = await readSessionLog(logWith(content), { fileSessionId: OTHER });
    expect(named.sessionId).toBe(OTHER);
    expect(named.records.map((x) => x.record.uuid)).toEqual(['x']);
  });

  it('gives the same result whatever the chunk size (lines and UTF-8 characters split across chunks)', async () => {
    const records = [user({ uuid: 'a', text: 'héllo wörld ✓ 🚀'.repeat(20) }), assistant({ uuid: 'b', parentUuid: 'a' })];
    const content = jsonl(records).replace(/\n/g, '\r\n') + 'garbage\nmore';
    const file = logWith(content);
    const big = await readSessionLog(file);
    expect(big.records.map((x) => x.record)).toEqual(records);
    expect(big.diagnostics).toEqual([
      { code: 'malformed_line', line: 3 },
      { code: 'torn_tail', line: 4, bytes: 4 },
    ]);
    for (const chunkSize of [1, 2, 3, 7, 64]) {
      expect(await readSessionLog(file, { chunkSize })).toEqual(big);
    }
  });

  it('strips a UTF-8 byte order mark on the first line', async () => {
    const a = user({ uuid: 'a' });
    const r = await readSessionLog(logWith(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(jsonl([a]))])));
    expect(r.records.map((x) => x.record)).toEqual([a]);
  });

  it('throws session_not_found for a missing file', async () => {
    const err = await readSessionLog(join(tempDir(), 'missing.jsonl')).catch((e: unknown) => e);
    expect(isMendError(err, 'session_not_found')).toBe(true);
  });

  it('a FIFO at a session path is reported, never read (opening it does not hang)', async () => {
    const fifo = join(tempDir(), 'fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    const err = await readSessionLog(fifo).catch((e: unknown) => e);
    expect(isMendError(err, 'session_read_failed')).toBe(true);
    expect((err as Error).message).toContain('not a regular file (a FIFO)');
  });

  it('throws session_read_failed for other I/O errors (a folder, an unreadable file)', async () => {
    const dir = join(tempDir(), 'dir.jsonl');
    mkdirSync(dir);
    const err = await readSessionLog(dir).catch((e: unknown) => e);
    expect(isMendError(err, 'session_read_failed')).toBe(true);
    expect((err as Error).message).toContain('not a regular file (a directory)');
    if (process.getuid?.() !== 0) {
      const file = logWith(jsonl([user({ uuid: 'a' })]));
      chmodSync(file, 0o000);
      const err2 = await readSessionLog(file).catch((e: unknown) => e);
      expect(isMendError(err2, 'session_read_failed')).toBe(true);
    }
  });
});
