/**
 * `mend sessions import` reads its input as a stream through the one line splitter and
 * checks every line as every store's reader does: any chunking gives the same session,
 * and the lines it refuses are exactly those the reader reports as damaged, each named
 * by its number, with nothing written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { isMendError, type MendError } from '../../src/errors.js';
import { readSessionBytes } from '../../src/session/log-reader.js';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import { exportSession, importSession } from '../../src/store/session-transfer.js';
import { cutAt } from '../support/arbitraries.js';
import { fixtureLines, sessionIdOf } from '../support/store-fixtures.js';

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

const WHO = { pid: process.pid, host: 'session-import-test' };

function freshStore(): JsonlSessionStore {
  const home = mkdtempSync(join(tmpdir(), 'mend-import-'));
  homes.push(home);
  return new JsonlSessionStore({ home });
}

async function exported(store: JsonlSessionStore, ref: Parameters<typeof exportSession>[1]): Promise<string> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  await exportSession(store, ref, sink);
  return Buffer.concat(chunks).toString('utf8');
}

const lines = fixtureLines('clean-tool-round-trip').filter((l) => l !== '');

describe('sessions import', () => {
  it('streams any chunking (CRLF, blank lines, a BOM, no final newline) into the same session', async () => {
    const input = Buffer.from(`\ufeff${lines[0]}\r\n\r\n${lines.slice(1, -1).join('\n')}\n  \n${lines.at(-1)}`, 'utf8');
    const compact = `${lines.join('\n')}\n`;
    const cutsList = [[], [1], [2, 3, 4, 5, 6], Array.from({ length: 40 }, (_, i) => Math.floor((input.length * i) / 40)), [input.length - 1]];
    for (const offsets of cutsList) {
      const store = freshStore();
      const imported = await importSession(store, { projectRoot: '/work/p', cwd: '/work/p' }, Readable.from(cutAt(input, offsets)), { who: WHO });
      expect(imported.records).toBe(lines.length);
      expect(imported.ref.sessionId).toBe(sessionIdOf(lines));
      expect(await exported(store, imported.ref)).toBe(compact);
    }
  });

  it('refuses exactly the lines the reader reports as damaged, names each, and writes nothing', async () => {
    const sessionId = sessionIdOf(lines);
    const tooDeep = JSON.stringify({
      ...(JSON.parse(lines[1]!) as object),
      uuid: 'deep',
      extra: JSON.parse(`${'['.repeat(300)}${']'.repeat(300)}`) as unknown,
    });
    const notARecord = JSON.stringify({ sessionId, uuid: 'x' });
    const input = [lines[0], 'garbage', lines[1], notARecord, '', tooDeep, '[1,2]', lines[2], '{"torn": '].join('\n');
    const store = freshStore();
    const scope = { projectRoot: '/work/bad', cwd: '/work/bad' };
    const failure = await importSession(store, scope, Readable.from([Buffer.from(input)]), { who: WHO }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isMendError(failure, 'malformed_line')).toBe(true);
    const details = (failure as MendError).details as { line: number; badLines: Array<{ line: number; reason: string }>; badLineCount: number };
    const read = await readSessionBytes(Buffer.from(input));
    const damaged = read.diagnostics.filter((d) => ['malformed_line', 'torn_tail', 'invalid_record'].includes(d.code)).map((d) => ('line' in d ? d.line : 0));
    expect(details.badLines.map((b) => b.line)).toEqual(damaged);
    expect(damaged).toEqual([2, 4, 6, 7, 9]);
    expect(details.badLineCount).toBe(5);
    expect(details.line).toBe(2);
    expect(details.badLines.find((b) => b.line === 6)?.reason).toContain('nested deeper than');
    expect(details.badLines.find((b) => b.line === 9)?.reason).toContain('torn');
    expect((failure as Error).message).toMatch(/5 bad lines \(line 2: not JSON; line 4: not a session record .*; line 9: not JSON .*\); nothing was written/);
    expect(await store.list(scope)).toEqual([]);
    expect(await store.exists(await store.newSession(scope, sessionId))).toBe(false);
  });

  it('lists the first hundred bad lines and counts them all', async () => {
    const input = [lines[0], ...Array.from({ length: 150 }, (_, i) => `bad ${i}`)].join('\n');
    const failure = (await importSession(freshStore(), { projectRoot: '/work/many', cwd: '/work/many' }, Readable.from([input]), { who: WHO }).catch(
      (e: unknown) => e,
    )) as MendError;
    const details = failure.details as { badLines: unknown[]; badLineCount: number };
    expect(details.badLines).toHaveLength(100);
    expect(details.badLineCount).toBe(150);
    expect(failure.message).toContain('145 more');
  });
});
