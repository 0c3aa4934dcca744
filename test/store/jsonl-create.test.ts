/**
 * The JSONL store's whole-log create (session/log-create.ts), beyond the contract
 * suite: a failure at any step leaves neither a log nor a temporary file, and a
 * temporary file a crash left behind is never taken for a session.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import { createLogWhole, tempLogPath, type LogCreateFs } from '../../src/session/log-create.js';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import { scopeFor, WRITER } from '../support/store-fixtures.js';
import { record } from '../support/store-records.js';

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'mend-log-create-'));
  homes.push(home);
  return home;
}

function records(id: string, count: number, day = 1) {
  return Array.from({ length: count }, (_, i) =>
    record(id, i + 1, i === 0 ? null : `${id.slice(0, 8)}-u${i}`, `2026-03-0${day}T00:00:0${i}.000Z`, `record ${i + 1}`),
  );
}

/** The real file system with one call failing with `errno` (on its `nth` use). */
function failing(call: 'writeSync' | 'fsyncSync' | 'renameSync' | 'openSync', errno: string, nth = 1): LogCreateFs {
  let calls = 0;
  const fail = () => {
    if (++calls === nth) throw Object.assign(new Error(`injected ${errno}`), { code: errno });
  };
  return {
    ...fs,
    [call]: (...args: unknown[]) => {
      fail();
      return (fs[call] as (...a: unknown[]) => unknown)(...args);
    },
  } as LogCreateFs;
}

describe('a whole log is created whole or not at all', () => {
  for (const [call, errno, nth, code] of [
    ['writeSync', 'ENOSPC', 1, 'store_unavailable'],
    ['fsyncSync', 'EIO', 1, 'store_unavailable'],
    ['renameSync', 'EACCES', 1, 'session_write_failed'],
    // The folder's fsync (the second fsync): the log is taken back, its name might not survive a cut.
    ['fsyncSync', 'EIO', 2, 'store_unavailable'],
  ] as const) {
    it(`${call} #${nth} failing with ${errno}: ${code}, and the folder holds neither the log nor a temporary file`, () => {
      const home = newHome();
      const id = randomUUID();
      const path = join(home, 'chats', `${id}.jsonl`);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(join(dirname(path), 'other.txt'), 'kept');
      let error: unknown;
      try {
        createLogWhole(path, records(id, 4), failing(call, errno, nth));
      } catch (e) {
        error = e;
      }
      expect(isMendError(error, code), String(error)).toBe(true);
      expect(readdirSync(dirname(path))).toEqual(['other.txt']);
    });
  }

  it('the log is private (0600) and holds every record; an existing name is never replaced', () => {
    const home = newHome();
    const id = randomUUID();
    const path = join(home, 'projects', 'p', 'chats', `${id}.jsonl`);
    createLogWhole(path, records(id, 3));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    const text = fs.readFileSync(path, 'utf8');
    expect(text.split('\n').map((l) => (l === '' ? null : (JSON.parse(l) as { uuid: string }).uuid))).toEqual([
      `${id.slice(0, 8)}-u1`,
      `${id.slice(0, 8)}-u2`,
      `${id.slice(0, 8)}-u3`,
      null,
    ]);
    expect(() => createLogWhole(path, records(id, 1))).toThrow(expect.objectContaining({ code: 'session_exists' }));
    expect(fs.readFileSync(path, 'utf8')).toBe(text);
    expect(readdirSync(dirname(path))).toEqual([`${id}.jsonl`]);
  });
});

it('a temporary file a crash left behind is no session: not listed, not latest, not resumable', async () => {
  const store = new JsonlSessionStore({ home: newHome() });
  const scope = scopeFor('stray');
  const older = randomUUID();
  const ref = await store.newSession(scope, older);
  const lease = await store.acquire(ref, WRITER);
  await lease.createWith(records(older, 2, 1).map((r) => ({ ...r, cwd: scope.projectRoot })));
  await lease.release();
  // What a cut between the temporary file's fsync and the rename leaves: a newer, complete log under the hidden name.
  const strayId = randomUUID();
  const stray = tempLogPath(join(dirname(ref.location), `${strayId}.jsonl`));
  writeFileSync(
    stray,
    records(strayId, 3, 2)
      .map((r) => JSON.stringify({ ...r, cwd: scope.projectRoot }) + '\n')
      .join(''),
    { mode: 0o600 },
  );

  expect((await store.list(scope)).map((l) => l.ref.sessionId)).toEqual([older]);
  expect((await store.latest(scope))?.sessionId).toBe(older);
  await expect(store.resolve(scope, stray)).rejects.toSatisfy((e) => isMendError(e, 'invalid_resume_target'));
  // The fork's own id is still free: the stray file does not take it.
  const fresh = await store.newSession(scope, strayId);
  expect(await store.exists(fresh)).toBe(false);
});
