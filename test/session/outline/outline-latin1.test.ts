/**
 * The outline pass reads each line as latin1 first (one byte a character, no
 * UTF-8 decoding) and keeps that reading only when everything the outline keeps of the
 * record is ASCII (keepsOnlyAscii); any other line is read again as UTF-8. So the outline
 * must be exactly the one that reading every line as UTF-8 gives, whatever non-ASCII
 * text or bytes a log holds and wherever: record and part keys, uuids, parents, session
 * ids, call ids and names, texts, arguments, invalid UTF-8, text that is what another
 * text's UTF-8 bytes read as in latin1, a byte-order mark, garbage lines.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../../src/recovery/build-plan.js';
import { planFromOutline } from '../../../src/runtime/outline-plan.js';
import { buildConversation } from '../../../src/session/conversation-loader.js';
import { readSessionBytes } from '../../../src/session/log-reader.js';
import { OutlinePass } from '../../../src/session/outline/outline-pass.js';
import { outlineBytes } from '../../../src/session/outline/outline-reader.js';
import type { ChatRecord } from '../../../src/session/records.js';
import { INVALID_UTF8_PIECES, garbageLineArb, sessionRecordsArb } from '../../support/arbitraries.js';

/** Non-ASCII pieces: text, what 'é' reads as in latin1 ('Ã©'), spaces JavaScript trims, invalid UTF-8. */
const PIECES: readonly Buffer[] = [
  ...['é', 'Ã©', '\u00a0', '日志', '😀', '\u2028', 'ÿ'].map((s) => Buffer.from(s, 'utf8')),
  ...INVALID_UTF8_PIECES.filter((p) => p.every((b) => b >= 0x80)).map((p) => Buffer.from(p)),
];

const MARK = /@@(\d+)@@/g;

/** The line of a record whose strings hold markers, each marker replaced by its piece's bytes. */
function lineBytes(record: unknown): Buffer {
  const json = JSON.stringify(record);
  const out: Buffer[] = [];
  let at = 0;
  for (const m of json.matchAll(MARK)) {
    out.push(Buffer.from(json.slice(at, m.index), 'utf8'), PIECES[Number(m[1]) % PIECES.length]!);
    at = m.index + m[0].length;
  }
  out.push(Buffer.from(json.slice(at), 'utf8'));
  return Buffer.concat(out);
}

/**
 * Puts markers into a record: in a string value or a key where `next()` says so, and in
 * every occurrence of a linking string (uuid, parent, session id, call id, name) alike
 * where `linked(s)` says so, so that chains and call/result pairs still hold.
 */
function sprinkle(value: unknown, next: () => number, linked: (s: string) => number, key = ''): unknown {
  const mark = (n: number): string => (n < PIECES.length ? `@@${n}@@` : '');
  if (typeof value === 'string') {
    const links = ['uuid', 'parentUuid', 'sessionId', 'id', 'name', 'callId'];
    return links.includes(key) ? value + mark(linked(value)) : value + mark(next());
  }
  if (Array.isArray(value)) return value.map((v) => sprinkle(v, next, linked));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // Keys change more rarely: most records stay valid.
    const renamed = next() % 8 === 0 ? k + mark(next()) : k;
    out[renamed] = sprinkle(v, next, linked, k);
  }
  return out;
}

const logArb = fc
  .record({
    records: sessionRecordsArb,
    choices: fc.array(fc.nat(3 * PIECES.length), { minLength: 16, maxLength: 64 }),
    links: fc.array(fc.nat(6 * PIECES.length), { minLength: 4, maxLength: 16 }),
    garbage: fc.array(fc.tuple(fc.nat(), garbageLineArb), { maxLength: 2 }),
    bom: fc.boolean(),
  })
  .map(({ records, choices, links, garbage, bom }) => {
    let n = 0;
    const next = (): number => choices[n++ % choices.length]!;
    const linked = (s: string): number => {
      let h = 0;
      for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
      return links[h % links.length]!;
    };
    const lines = records.map((r) => lineBytes(sprinkle(r, next, linked)));
    for (const [at, line] of garbage) lines.splice(at % (lines.length + 1), 0, line);
    const body = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
    return bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : body;
  });

/**
 * The pass over `bytes` reading every line it parses as latin1 first (without the line
 * scanner, which reads ordinary lines without parsing them: test/session/outline/line-scanner.test.ts),
 * the pass as the outline reads it (scanner, then latin1), and one that reads every line as
 * UTF-8. The first two must equal the last.
 */
function bothPasses(bytes: Buffer): { latin1: OutlinePass; utf8: OutlinePass } {
  const latin1 = new OutlinePass(bytes.length, bytes.length, true, 0, false);
  latin1.block(bytes, 0);
  const outline = new OutlinePass(bytes.length, bytes.length, true);
  outline.block(bytes, 0);
  const utf8 = new OutlinePass(bytes.length, bytes.length, true);
  for (let start = 0, nl = bytes.indexOf(0x0a); nl !== -1; start = nl + 1, nl = bytes.indexOf(0x0a, start)) {
    if (!utf8.handle(bytes.toString('utf8', start, nl), start, nl - start)) utf8.diagnostics.push({ code: 'malformed_line', line: utf8.line });
  }
  expectSameData(outline, utf8);
  return { latin1, utf8 };
}

/** toEqual only when they differ (for its diff): it walks every element of the columns, isDeepStrictEqual is much faster. */
function expectSameData(a: OutlinePass, b: OutlinePass): void {
  if (!isDeepStrictEqual(outlineData(a), outlineData(b))) expect(outlineData(a)).toEqual(outlineData(b));
}

function outlineData(pass: OutlinePass): unknown {
  const { reparsed: _reparsed, scanned: _scanned, ...data } = pass.data();
  return data;
}

async function expectSamePlan(bytes: Buffer): Promise<void> {
  const fullLoaded = buildConversation(await readSessionBytes(bytes));
  // A plan from the outline is the full plan without its histories (plain values: they load on request).
  const { apiHistory, originalApiHistory: _original, ...fullHead } = buildPlanForSession(fullLoaded, { allowAutoContinue: false }, null);
  const { records: _records, ...fullConversation } = fullLoaded.conversation;
  const { loaded, plan } = planFromOutline(await outlineBytes(bytes), {}, { allowAutoContinue: false }, null);
  expect(plan).toEqual(fullHead);
  expect(plan.apiEntryCount).toBe(apiHistory.length);
  expect(loaded).toEqual({ ...fullLoaded, conversation: fullConversation });
}

const base = { sessionId: 's1', timestamp: '2026-01-01T00:00:00.000Z', version: 'mend/0.1.0' };
const user = (uuid: string, parentUuid: string | null, text: string): ChatRecord =>
  ({ ...base, uuid, parentUuid, type: 'user', message: { role: 'user', parts: [{ text }] } }) as ChatRecord;
const call = (uuid: string, parentUuid: string, id: string, name: string): ChatRecord =>
  ({ ...base, uuid, parentUuid, type: 'assistant', message: { role: 'model', parts: [{ functionCall: { id, name, args: { path: 'ü' } } }] } }) as ChatRecord;
const logOf = (records: readonly ChatRecord[]): Buffer => Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join(''), 'utf8');

describe('the outline pass read as latin1', () => {
  it('keeps the latin1 reading of records whose non-ASCII text is only content (nothing read twice)', () => {
    const bytes = logOf([user('u1', null, 'first'), user('u2', 'u1', 'Déjà 日志 😀'), call('a1', 'u2', 'c1', 'edit'), user('u3', 'a1', 'naïve')]);
    const { latin1, utf8 } = bothPasses(bytes);
    expectSameData(latin1, utf8);
    expect(latin1.reparsed).toBe(0);
  });

  it('reads a record again as UTF-8 when a kept string is not ASCII: ids, names, uuids, parents, part keys', () => {
    const records = [
      user('u1', null, 'first'),
      call('a1', 'u1', 'c-é', 'edit'),
      call('a2', 'a1', 'c2', 'édit'),
      user('ü3', 'a2', 'x'),
      user('u4', 'ü3', 'x'),
      { ...user('u5', 'u4', 'x'), message: { role: 'user', parts: [{ text: 'x', clé: 1 }] } } as ChatRecord,
    ];
    const bytes = logOf(records);
    const { latin1, utf8 } = bothPasses(bytes);
    expectSameData(latin1, utf8);
    expect(latin1.reparsed).toBe(5);
    expect(latin1.kept.outlineParts(1)).toEqual([{ functionCall: { id: 'c-é', name: 'edit' } }]);
    expect(latin1.kept.outlineParts(2)).toEqual([{ functionCall: { id: 'c2', name: 'édit' } }]);
    expect(latin1.kept.uuid(3)).toBe('ü3');
    expect(latin1.kept.parentUuid(4)).toBe('ü3');
  });

  it("does not take 'é' read as latin1 for the 'Ã©' written before it", () => {
    // The first uuid is 'Ã©' itself; the parent of the second is 'é', whose UTF-8 bytes read as 'Ã©' in latin1.
    const bytes = logOf([user('Ã©', null, 'a'), user('u2', 'é', 'b'), user('u3', 'u2', 'c')]);
    const { latin1, utf8 } = bothPasses(bytes);
    expectSameData(latin1, utf8);
    expect(latin1.kept.parentUuid(1)).toBe('é');
    expect(latin1.kept.isParent(1, 0)).toBe(false);
  });

  it('property: non-ASCII text and bytes anywhere give the outline and the plan of reading every line as UTF-8', async () => {
    // Records kept as read in latin1, and records kept after a second reading as UTF-8.
    let fromLatin1 = 0;
    let readAgain = 0;
    await fc.assert(
      fc.asyncProperty(logArb, async (bytes) => {
        const { latin1, utf8 } = bothPasses(bytes);
        expectSameData(latin1, utf8);
        // Every line but the first is read as latin1 first; `reparsed` of them again.
        const latin1Kept = Math.max(0, latin1.line - 1) - latin1.reparsed;
        fromLatin1 += latin1Kept;
        readAgain += latin1.kept.length - latin1Kept;
        await expectSamePlan(bytes);
      }),
      { numRuns: 400 },
    );
    // Both readings were exercised.
    expect(fromLatin1).toBeGreaterThan(100);
    expect(readAgain).toBeGreaterThan(100);
  });
});
