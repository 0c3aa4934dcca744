/**
 * Property tests for read + load + plan over the crash corpus, and for
 * repairHistory over generated histories.
 *
 * For every corpus session (always a temp copy; fixtures/ is never written):
 *  (a) truncated at byte offsets: every offset within 3 bytes of a line end, and
 *      every 4th offset elsewhere (about 19k of the corpus' 73k offsets; set
 *      MEND_PROPERTY_EXHAUSTIVE=1 for all of them). They are read from memory through
 *      the reader's own byte path (`loadSessionBytes`; tens of thousands of temp
 *      files would take minutes); a sampled property checks that a real temp file
 *      gives the same LoadedSession as the in-memory bytes;
 *  (b) one random line replaced by garbage (random bytes, invalid UTF-8, JSON bits);
 *  (c) lines shuffled;
 *  (d) lines duplicated;
 * loadSession and buildSessionRecoveryPlan never throw and the plan oracle holds
 * (`planProblems` in test/support/fuzz-worker.ts, shared with `npm run fuzz`): the
 * apiHistory passes validateProviderHistory, two builds are deep-equal, the planId
 * matches rp_<16 hex>, the kind is one of four, and the policy and continuation
 * invariants hold.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSessionRecoveryPlan } from '../../src/recovery/build-plan.js';
import { repairHistory, type RepairResult } from '../../src/recovery/repair-history.js';
import { syntheticResultPart } from '../../src/recovery/synthetic-result.js';
import { validateProviderHistory } from '../../src/recovery/validate-history.js';
import type { LoadedSession } from '../../src/session/conversation.js';
import type { Content, Part } from '../../src/session/records.js';
import { loadSession, loadSessionBytes } from '../../src/session/session-loader.js';
import { checkPlan, planInputOf, planProblems } from '../support/fuzz-worker.js';
import { garbageLineArb, historyArb, joinLines, plainHistoryArb, splitLines } from '../support/arbitraries.js';
import { copyCase, listCorpus } from '../support/corpus.js';
import { conversationOf } from '../support/history.js';

const corpus = listCorpus().map((c) => {
  const { dir, sessionPath } = copyCase(c);
  return { name: c.name, dir, sessionPath, bytes: readFileSync(sessionPath) };
});
/**
 * Truncation visits every offset within 3 bytes of a line end and every STRIDE-th
 * other one: exhaustively (STRIDE 1, about 73k offsets) it costs ~15 s of CPU, too
 * much for `npm test`. MEND_PROPERTY_EXHAUSTIVE=1 makes it exhaustive.
 */
const STRIDE = process.env.MEND_PROPERTY_EXHAUSTIVE === '1' ? 1 : 4;

const scratch = mkdtempSync(join(tmpdir(), 'mend-property-'));
afterAll(() => {
  for (const c of corpus) rmSync(c.dir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** Loads `bytes` from a real temp file and returns every broken invariant (a throw is one too). */
async function problemsOfLog(bytes: Buffer, path = join(scratch, 'session.jsonl')): Promise<string[]> {
  writeFileSync(path, bytes);
  return problemsOfLoaded(await loadSession(path));
}

function problemsOfLoaded(loaded: LoadedSession): string[] {
  const { problems } = checkPlan(planInputOf(loaded));
  const optIn = checkPlan(planInputOf(loaded, true));
  return [...problems, ...optIn.problems.map((p) => `with allowAutoContinue: ${p}`)];
}

const caseArb = fc.constantFrom(...corpus);
const nonEmptyCaseArb = fc.constantFrom(...corpus.filter((c) => splitLines(c.bytes).lines.length > 0));

describe('corpus sessions, damaged', () => {
  it('has a corpus to damage', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(25);
  });

  it('(a) truncated at byte offsets (every offset near a line end, every STRIDE-th elsewhere): never throws, the plan oracle holds', async () => {
    let offsets = 0;
    const failures: string[] = [];
    for (const [fileIndex, c] of corpus.entries()) {
      const path = join(c.dir, 'truncated.jsonl');
      const nearLineEnd = new Set<number>([0, 1, c.bytes.length]);
      c.bytes.forEach((b, i) => {
        if (b === 0x0a) for (let d = -3; d <= 3; d++) nearLineEnd.add(i + 1 + d);
      });
      for (let k = 0; k <= c.bytes.length; k++) {
        const boundary = nearLineEnd.has(k);
        // The phase moves with the file so every residue of the stride is covered somewhere.
        if (!boundary && (k + fileIndex) % STRIDE !== 0) continue;
        offsets++;
        try {
          // Chunk sizes vary with the offset so lines also span chunks.
          const loaded = await loadSessionBytes(c.bytes.subarray(0, k), path, k % 3 === 0 ? {} : { chunkSize: 1 + (k % 97) });
          // Every sampled offset gets the whole oracle on one build; the second build
          // (determinism) and the opt-in plan are checked near line ends and every 16th offset.
          let problems: string[];
          if (boundary || k % 16 === 0) {
            problems = problemsOfLoaded(loaded);
          } else {
            const plan = buildSessionRecoveryPlan(planInputOf(loaded));
            problems = planProblems(plan, plan);
          }
          if (problems.length > 0) failures.push(`${c.name} cut at ${k}: ${problems.join('; ')}`);
        } catch (error) {
          failures.push(`${c.name} cut at ${k}: threw ${String(error)}`);
        }
      }
    }
    expect(offsets).toBeGreaterThan(corpus.reduce((n, c) => n + c.bytes.length, 0) / STRIDE);
    expect(failures.slice(0, 10)).toEqual([]);
  }, 180_000);

  it('(a) sampled truncations read from real temp files agree with the in-memory reads', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, fc.double({ min: 0, max: 1, noNaN: true }), async (c, at) => {
        const bytes = c.bytes.subarray(0, Math.floor(at * c.bytes.length));
        const real = join(scratch, 'real.jsonl');
        writeFileSync(real, bytes);
        expect(await loadSession(real)).toEqual(await loadSessionBytes(bytes, join(scratch, 'mem.jsonl')));
        expect(problemsOfLoaded(await loadSession(real))).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it('(b) one line replaced by garbage bytes (invalid UTF-8 included)', async () => {
    await fc.assert(
      fc.asyncProperty(nonEmptyCaseArb, fc.nat(), garbageLineArb, async (c, n, garbage) => {
        const { lines, finalNewline } = splitLines(c.bytes);
        lines[n % lines.length] = garbage;
        expect(await problemsOfLog(joinLines(lines, finalNewline))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('(c) lines shuffled', async () => {
    const shuffledArb = nonEmptyCaseArb.chain((c) => {
      const { lines, finalNewline } = splitLines(c.bytes);
      return fc
        .shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length })
        .map((shuffled) => ({ name: c.name, bytes: joinLines(shuffled, finalNewline) }));
    });
    await fc.assert(
      fc.asyncProperty(shuffledArb, async ({ bytes }) => {
        expect(await problemsOfLog(bytes)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('(d) lines duplicated', async () => {
    const copiesArb = fc.array(fc.record({ from: fc.nat(), to: fc.nat() }), { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(nonEmptyCaseArb, copiesArb, async (c, copies) => {
        const { lines, finalNewline } = splitLines(c.bytes);
        for (const { from, to } of copies) lines.splice(to % (lines.length + 1), 0, lines[from % lines.length]!);
        expect(await problemsOfLog(joinLines(lines, finalNewline))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

// ---- repairHistory over generated histories ----------------------------------------------

type Key = string;
const keyOf = (id: string | undefined, name: string): Key => JSON.stringify([id ?? '', name]);

function countBy<T>(items: readonly T[], key: (t: T) => Key): Map<Key, number> {
  const counts = new Map<Key, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function isSynthetic(part: Part, synthesized: readonly string[]): boolean {
  const r = part.functionResponse;
  return r !== undefined && r.id !== undefined && synthesized.includes(r.id) && isDeepStrictEqual(part, syntheticResultPart(r.id, r.name));
}

/** What repairHistory promises about recorded results, as a list of broken promises. */
function repairProblems(input: readonly Content[], out: RepairResult): string[] {
  const problems: string[] = [];
  const validation = validateProviderHistory(out.history);
  if (!validation.ok) problems.push(`output fails validation: ${validation.problems.join('; ')}`);

  // No recorded result is lost unless reported as a dropped duplicate or orphan, and none is altered
  // (but for a reported rename: that result travels under its call's name).
  const recordedIn = input.flatMap((e) => e.parts).filter((p) => p.functionResponse);
  const recordedOut = out.history.flatMap((e) => e.parts).filter((p) => p.functionResponse && !isSynthetic(p, out.synthesizedCallIds));
  const renames = out.repairs.flatMap((r) => (r.type === 'renamed_tool_result' ? [r] : []));
  const dropped = out.repairs.flatMap((r) =>
    r.type === 'dropped_duplicate_tool_result' || r.type === 'dropped_orphan_tool_result' ? [keyOf(r.callId, r.name)] : [],
  );
  const inCounts = countBy(recordedIn, (p) => keyOf(p.functionResponse!.id, p.functionResponse!.name));
  const inResults = countBy(recordedIn, (p) => JSON.stringify(p.functionResponse));
  for (const r of renames) {
    const from = keyOf(r.callId, r.recordedName);
    const to = keyOf(r.callId, r.name);
    inCounts.set(from, (inCounts.get(from) ?? 0) - 1);
    inCounts.set(to, (inCounts.get(to) ?? 0) + 1);
    // Which of the results recorded under that name was renamed is not said: any may be.
    const originals = recordedIn.filter((p) => p.functionResponse!.id === r.callId && p.functionResponse!.name === r.recordedName);
    if (originals.length === 0) problems.push(`rename of ${r.callId} from ${r.recordedName}: no such recorded result`);
    for (const original of originals) {
      const renamed = JSON.stringify({ ...original.functionResponse, name: r.name });
      inResults.set(renamed, (inResults.get(renamed) ?? 0) + 1);
    }
  }
  const outCounts = countBy(recordedOut, (p) => keyOf(p.functionResponse!.id, p.functionResponse!.name));
  const droppedCounts = countBy(dropped, (k) => k);
  for (const [key, n] of inCounts) {
    const kept = outCounts.get(key) ?? 0;
    const gone = droppedCounts.get(key) ?? 0;
    if (kept + gone !== n) problems.push(`result ${key}: ${n} recorded, ${kept} kept + ${gone} reported dropped`);
  }
  // The result itself travels unchanged (what else shared its part may be split off).
  for (const [result, n] of countBy(recordedOut, (p) => JSON.stringify(p.functionResponse))) {
    if ((inResults.get(result) ?? 0) < n) problems.push(`result ${result} was altered or duplicated`);
  }

  // A recorded result is never replaced by a synthetic one. Ids are unique only per model
  // entry (a result answers the latest call of its id and name), so count per id: a call
  // whose window (up to the next call of the same id) holds a recorded result of its id
  // and name must not be among the synthesized ones.
  const synthesizedCounts = countBy(out.synthesizedCallIds, (id) => id);
  for (const [id, synthesized] of synthesizedCounts) {
    const callAt = input.flatMap((e, i) => {
      const c = e.role === 'model' ? e.parts.find((p) => p.functionCall?.id === id) : undefined;
      return c ? [{ at: i, name: c.functionCall!.name }] : [];
    });
    const answered = callAt.filter((p, k) => {
      const end = callAt[k + 1]?.at ?? input.length;
      return input.some(
        (e, i) => i > p.at && i < end && e.role === 'user' && e.parts.some((q) => q.functionResponse?.id === id && q.functionResponse.name === p.name),
      );
    }).length;
    if (synthesized > callAt.length - answered) problems.push(`call ${id} got a synthetic result although its result is recorded`);
  }
  return problems;
}

describe('repairHistory over generated histories', () => {
  it('output is provider-valid, keeps or reports every recorded result, never replaces one', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const before = structuredClone(history);
        const out = repairHistory(history);
        expect(history).toEqual(before); // the input is not touched
        expect(repairProblems(history, out)).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  it('the same for histories of well-formed parts (one call or result per part)', () => {
    fc.assert(
      fc.property(plainHistoryArb, (history) => {
        expect(repairProblems(history, repairHistory(history))).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  it('is idempotent: repairing a repaired history changes nothing', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const once = repairHistory(history);
        expect(repairHistory(once.history)).toEqual({ history: once.history, repairs: [], synthesizedCallIds: [], syntheticParts: new Set() });
      }),
      { numRuns: 1500 },
    );
  });

  it('plans over generated conversations never throw and satisfy the plan oracle', () => {
    const optionsArb = fc.record({
      writtenByMend: fc.boolean(),
      aborted: fc.option(fc.constantFrom('sigint' as const, 'sigterm' as const, 'interrupt' as const), { nil: undefined }),
      attempts: fc.nat(2),
      allowAutoContinue: fc.boolean(),
    });
    fc.assert(
      fc.property(historyArb, optionsArb, (history, { allowAutoContinue, aborted, ...opts }) => {
        const input = {
          sessionId: '11111111-2222-3333-4444-555555555555',
          conversation: conversationOf(history, { ...opts, ...(aborted ? { aborted } : {}) }),
          options: { allowAutoContinue },
        };
        const plan = buildSessionRecoveryPlan(input);
        expect(planProblems(plan, buildSessionRecoveryPlan(input))).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });
});

// ---- bugs found by the properties: the shrunk counterexamples as plain regression tests ---

const SID = '11111111-2222-4333-8444-555555555555';
const line = (record: object): string => `${JSON.stringify(record)}\n`;
const base = (uuid: string, parentUuid: string | null, i: number) => ({
  uuid,
  parentUuid,
  sessionId: SID,
  timestamp: `2026-01-01T00:00:0${i}.000Z`,
});

describe('regressions (bugs found by the properties above)', () => {
  it("a model part holding a call AND a result: the call's recorded result must not vanish unreported", () => {
    // fast-check's shrunk counterexample of "keeps or reports every recorded result".
    const history: Content[] = [
      {
        role: 'model',
        parts: [
          {
            functionCall: { id: 'c1', name: 'run_shell_command', args: { command: '' } },
            functionResponse: { id: '', name: 'run_shell_command', response: { output: '' } },
          },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'run_shell_command', response: { output: '' } } }] },
    ];
    // Was: history [] and only the stray '' result reported; c1's call and its recorded result gone.
    expect(repairProblems(history, repairHistory(history))).toEqual([]);
  });

  it('the same through a log: an executed command must not be silently forgotten (and so re-run)', async () => {
    const bytes = Buffer.from(
      line({ ...base('u1', null, 0), type: 'user', message: { role: 'user', parts: [{ text: 'list files' }] } }) +
        line({
          ...base('a1', 'u1', 1),
          type: 'assistant',
          message: {
            role: 'model',
            parts: [
              {
                functionCall: { id: 'c1', name: 'run_shell_command', args: { command: 'ls' } },
                functionResponse: { name: 'run_shell_command', response: {} },
              },
            ],
          },
        }) +
        line({
          ...base('r1', 'a1', 2),
          type: 'tool_result',
          message: { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'run_shell_command', response: { output: 'a.txt' } } }] },
        }),
    );
    writeFileSync(join(scratch, 'both-in-one-part.jsonl'), bytes);
    const loaded = await loadSession(join(scratch, 'both-in-one-part.jsonl'));
    const plan = buildSessionRecoveryPlan(planInputOf(loaded));
    // Was: kind interrupted_prompt, apiHistory [user "list files"], the continuation retried the
    // prompt and repairs reported only the stray result: the ls call and its output vanished unreported.
    const kept = plan.apiHistory.some((e) => e.parts.some((p) => p.functionResponse?.id === 'c1'));
    const reported = plan.repairs.some((r) => 'callId' in r && r.callId === 'c1');
    expect(kept || reported).toBe(true);
  });

  it('a value nested a few thousand levels deep in a record must not make the planner throw', async () => {
    // Was: the reader accepted the record (JSON.parse and validation do not recurse into
    // unknown fields), then buildApiHistory / repairHistory cloned it recursively and overflowed
    // the stack (RangeError: Maximum call stack size exceeded) from about 1,900 levels on.
    const depth = 10_000;
    const nested = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const text =
      line({ ...base('u1', null, 0), type: 'user', message: { role: 'user', parts: [{ text: 'hi' }] } }) +
      `{"uuid":"a1","parentUuid":"u1","sessionId":"${SID}","timestamp":"2026-01-01T00:00:01.000Z","type":"assistant",` +
      `"message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{"d":${nested}}}}]}}\n`;
    writeFileSync(join(scratch, 'deep.jsonl'), text);
    const loaded = await loadSession(join(scratch, 'deep.jsonl'));
    // Rejecting the record as invalid (with a diagnostic) is fine; throwing is not.
    expect(problemsOfLoaded(loaded)).toEqual([]);
  });
});
