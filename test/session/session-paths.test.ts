import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import {
  findMostRecentSession,
  isSessionFileName,
  lastRecordTime,
  listSessions,
  projectDir,
  resolveResumeTarget,
  sessionLogPath,
} from '../../src/session/session-paths.js';
import { isSessionId, projectKey } from '../../src/session/session-ids.js';
import { SID, jsonl, useTempDirs, user } from './helpers.js';

const tempDir = useTempDirs();
const ID1 = 'aaaaaaaa-0000-4000-8000-000000000001';
const ID2 = 'aaaaaaaa-0000-4000-8000-000000000002';
const ID3 = 'aaaaaaaa-0000-4000-8000-000000000003';

function at(uuid: string, timestamp: string) {
  return { ...user({ uuid }), timestamp };
}

describe('session paths', () => {
  it('sanitizes the project root like Qwen Code', () => {
    expect(projectKey('/home/u/repo')).toBe('-home-u-repo');
    expect(projectKey('/a b/c_d.e/ü')).toBe('-a-b-c-d-e--');
    expect(projectDir('/h', '/home/u/repo')).toBe('/h/projects/-home-u-repo/chats');
    expect(sessionLogPath('/h', '/home/u/repo', SID)).toBe(`/h/projects/-home-u-repo/chats/${SID}.jsonl`);
  });

  it('recognizes session ids and session file names', () => {
    expect(isSessionId(SID)).toBe(true);
    expect(isSessionId(SID.toUpperCase())).toBe(true);
    expect(isSessionId('../' + SID)).toBe(false);
    expect(isSessionId(SID + 'x')).toBe(false);
    expect(isSessionFileName(`${SID}.jsonl`)).toBe(true);
    expect(isSessionFileName('0123456789abcdef0123456789abcdef.jsonl')).toBe(true);
    expect(isSessionFileName('notes.jsonl')).toBe(false);
    expect(isSessionFileName(`${SID}.jsonl.lock`)).toBe(false);
  });

  it('refuses a session id that is not a UUID when building a path', () => {
    let caught: unknown;
    try {
      sessionLogPath('/h', '/p', '../../etc/passwd');
    } catch (e) {
      caught = e;
    }
    expect(isMendError(caught, 'usage')).toBe(true);
  });

  it('lists every entry named like a session (a directory too: the reader reports it), and none for a missing folder', async () => {
    const dir = tempDir();
    fs.writeFileSync(join(dir, `${ID2}.jsonl`), '');
    fs.writeFileSync(join(dir, `${ID1}.jsonl`), '');
    fs.writeFileSync(join(dir, `${ID1}.jsonl.lock`), '');
    fs.writeFileSync(join(dir, 'notes.jsonl'), '');
    fs.mkdirSync(join(dir, `${ID3}.jsonl`));
    expect(await listSessions(dir)).toEqual([join(dir, `${ID1}.jsonl`), join(dir, `${ID2}.jsonl`), join(dir, `${ID3}.jsonl`)].sort());
    expect(await listSessions(join(dir, 'nope'))).toEqual([]);
  });

  it('finds the most recent session by the timestamp of its last record, not by mtime', async () => {
    const dir = tempDir();
    const older = join(dir, `${ID1}.jsonl`);
    const newer = join(dir, `${ID2}.jsonl`);
    fs.writeFileSync(newer, jsonl([at('a', '2025-01-01T00:00:00Z'), at('b', '2025-03-01T00:00:00Z')]) + '{"torn');
    fs.writeFileSync(older, jsonl([at('a', '2025-02-01T00:00:00Z')]));
    // The older session was touched last.
    fs.utimesSync(newer, new Date('2020-01-01'), new Date('2020-01-01'));
    expect(await findMostRecentSession(dir)).toBe(newer);
    expect(await lastRecordTime(newer)).toBe(Date.parse('2025-03-01T00:00:00Z'));
  });

  it('reads only the tail: finds the last timestamp behind a long earlier history, falls back to mtime', async () => {
    const dir = tempDir();
    const big = join(dir, `${ID1}.jsonl`);
    const filler = Array.from({ length: 2000 }, (_, i) => at(`f${i}`, '2024-01-01T00:00:00Z'));
    fs.writeFileSync(big, jsonl([...filler, at('last', '2025-06-01T00:00:00Z')]));
    expect(await lastRecordTime(big)).toBe(Date.parse('2025-06-01T00:00:00Z'));

    const noStamp = join(dir, `${ID2}.jsonl`);
    fs.writeFileSync(noStamp, 'garbage\n');
    fs.utimesSync(noStamp, new Date('2030-01-01'), new Date('2030-01-01'));
    expect(await lastRecordTime(noStamp)).toBeNull();
    expect(await findMostRecentSession(dir)).toBe(noStamp);
  });

  it('a last record larger than the first window is still found', async () => {
    const file = join(tempDir(), `${ID1}.jsonl`);
    fs.writeFileSync(file, jsonl([at('a', '2024-01-01T00:00:00Z'), { ...at('b', '2025-01-01T00:00:00Z'), pad: 'x'.repeat(100_000) }]));
    expect(await lastRecordTime(file)).toBe(Date.parse('2025-01-01T00:00:00Z'));
  });

  it('returns null when there is no session', async () => {
    expect(await findMostRecentSession(tempDir())).toBeNull();
    expect(await findMostRecentSession(join(tempDir(), 'missing'))).toBeNull();
  });
});

describe('resolveResumeTarget', () => {
  const context = { home: '/h', projectRoot: '/home/u/repo', cwd: '/work/here' };

  it('maps a UUID to the log in the project chats folder', () => {
    expect(resolveResumeTarget(SID, context)).toBe(`/h/projects/-home-u-repo/chats/${SID}.jsonl`);
  });

  it('resolves a .jsonl path against cwd', () => {
    expect(resolveResumeTarget('logs/s.jsonl', context)).toBe('/work/here/logs/s.jsonl');
    expect(resolveResumeTarget('../other/s.jsonl', context)).toBe('/work/other/s.jsonl');
    expect(resolveResumeTarget('/abs/s.jsonl', context)).toBe('/abs/s.jsonl');
  });

  it.each(['../../x', 'a/b', '', ' ', `${SID}/x`, `../${SID}`, '.jsonl', 'x.json', 'x.jsonl\0'])('refuses %j with invalid_resume_target', (arg) => {
    let caught: unknown;
    try {
      resolveResumeTarget(arg, context);
    } catch (e) {
      caught = e;
    }
    expect(isMendError(caught, 'invalid_resume_target')).toBe(true);
  });
});
