import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSession } from '../../src/session/session-loader.js';
import { OTHER_SID, SID, assistant, jsonl, useTempDirs, user } from './helpers.js';

const tempDir = useTempDirs();

describe('loadSession', () => {
  it('reads and builds: read diagnostics come along, the torn tail does not break the chain', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    writeFileSync(file, jsonl([user({ uuid: 'a', version: 'mend/0.1.0' }), assistant({ uuid: 'b', parentUuid: 'a', version: 'mend/0.1.0' })]) + '{"uu');
    const loaded = await loadSession(file);
    expect(loaded.conversation.leafUuid).toBe('b');
    expect(loaded.conversation.records.map((r) => r.uuid)).toEqual(['a', 'b']);
    expect(loaded.conversation.writtenByMend).toBe(true);
    expect(loaded.diagnostics).toEqual([{ code: 'torn_tail', line: 3, bytes: 4 }]);
  });

  it('an empty log takes its session id from the file name', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    writeFileSync(file, '');
    const loaded = await loadSession(file);
    expect(loaded.conversation.sessionId).toBe(SID);
    expect(loaded.conversation.leafUuid).toBeNull();
    expect(loaded.diagnostics).toEqual([]);
  });
});

describe('loadSession: the file name says which session the file holds', () => {
  it('a session file named by its id keeps that session although most lines are foreign', async () => {
    const dir = tempDir();
    const path = join(dir, `${SID}.jsonl`);
    const foreign = (uuid: string) => ({ ...user({ uuid }), sessionId: OTHER_SID });
    writeFileSync(path, jsonl([foreign('x1'), foreign('x2'), user({ uuid: 'a' })]));
    const loaded = await loadSession(path);
    expect(loaded.conversation.sessionId).toBe(SID);
    expect(loaded.conversation.records.map((r) => r.uuid)).toEqual(['a']);
    expect(loaded.diagnostics.map((d) => d.code)).toEqual(['mixed_session_id', 'mixed_session_id']);
  });
});
