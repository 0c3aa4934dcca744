/**
 * The id pool of an outline (src/session/outline/outline-pools.ts): ids of calls and results as
 * UTF-8 in one buffer, read back by number. Every id comes back as it was added, whatever
 * the order of reads and adds, however the pool grows or is appended to, with empty,
 * missing, long and non-ASCII ids, and ids with a lone surrogate (which UTF-8 cannot
 * hold: kept as strings).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdPool } from '../../../src/session/outline/outline-pools.js';
import { outlineBytes } from '../../../src/session/outline/outline-reader.js';

const idArb = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom('a', 'b', '_', '0', '9', '-'), maxLength: 24 }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  // Any UTF-16 code units: lone surrogates too, which UTF-8 cannot hold.
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constant('x'.repeat(70_000)) },
);

/** Adds, reads (by a fraction of the ids added so far) and appends of another pool, in any order. */
const opArb = fc.oneof(
  idArb.map((id) => ({ op: 'add' as const, id })),
  fc.double({ min: 0, max: 1, noNaN: true }).map((at) => ({ op: 'read' as const, at })),
  fc.array(idArb, { maxLength: 5 }).map((ids) => ({ op: 'append' as const, ids })),
);

describe('IdPool', () => {
  it('gives back every id as it was added, in any order', () => {
    const pool = new IdPool();
    const ids = ['call_1', '', undefined, 'call_2', 'x'.repeat(100_000), 'c3'];
    for (const id of ids) pool.add(id);
    for (const j of [5, 0, 4, 1, 2, 3, 0, 5]) expect(pool.at(j)).toBe(ids[j]);
  });

  it('keeps an id with a lone surrogate (JSON "\\ud800") as it was written, in the outline of a log too', async () => {
    const pool = new IdPool();
    for (const id of ['c1', 'c\ud800', 'c\udfff\ud800x', 'é']) pool.add(id);
    expect([0, 1, 2, 3].map((j) => pool.at(j))).toEqual(['c1', 'c\ud800', 'c\udfff\ud800x', 'é']);
    const base = { sessionId: 's1', timestamp: 't', version: 'mend/0.1.0' };
    const records = [
      { ...base, uuid: 'u1', parentUuid: null, type: 'user', message: { role: 'user', parts: [{ text: 'hi' }] } },
      {
        ...base,
        uuid: 'a1',
        parentUuid: 'u1',
        type: 'assistant',
        message: { role: 'model', parts: [{ functionCall: { id: 'c\ud800', name: 'x', args: {} } }] },
      },
      { ...base, uuid: 'u2', parentUuid: 'a1', type: 'user', message: { role: 'user', parts: [{ text: 'next' }] } },
    ];
    const outline = await outlineBytes(Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join('')));
    expect(outline.outlineParts(1)).toEqual([{ functionCall: { id: 'c\ud800', name: 'x' } }]);
  });

  it('property: reads interleaved with adds and appends give what was added', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        const pool = new IdPool();
        const added: (string | undefined)[] = [];
        for (const step of ops) {
          if (step.op === 'add') {
            pool.add(step.id);
            added.push(step.id);
          } else if (step.op === 'append') {
            const other = new IdPool();
            for (const id of step.ids) other.add(id);
            pool.append(other.data());
            added.push(...step.ids);
          } else if (added.length > 0) {
            const j = Math.min(added.length - 1, Math.floor(step.at * added.length));
            expect(pool.at(j)).toBe(added[j]);
          }
        }
        for (let j = added.length - 1; j >= 0; j--) expect(pool.at(j)).toBe(added[j]);
        for (let j = 0; j < added.length; j++) expect(pool.at(j)).toBe(added[j]);
      }),
      { numRuns: 300 },
    );
  });
});
