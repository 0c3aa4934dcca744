/**
 * Worst cases that must stay linear: planning a tail whose last model entry
 * holds many calls (classification, repair, continuation and notice), and reading a
 * record split into many fragments. Each is measured at n and 10n in the same run:
 * linear code costs about 10x, quadratic code about 100x. In-process, no child.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildPlanForSession } from '../src/recovery/build-plan.js';
import { buildConversation } from '../src/session/conversation-loader.js';
import type { ConversationRecord } from '../src/session/conversation.js';
import { readSessionLog } from '../src/session/log-reader.js';
import type { ChatRecord, Part } from '../src/session/records.js';

const SID = '11111111-2222-4333-8444-555555555555';

/** A prompt, then one model entry with `calls` calls; every other call has its result recorded. */
export function manyCallsConversation(calls: number): ConversationRecord {
  const base = (uuid: string, parentUuid: string | null) => ({
    uuid,
    parentUuid,
    sessionId: SID,
    timestamp: '2026-01-01T00:00:00.000Z',
    version: 'mend/0.1.0',
  });
  const callParts: Part[] = [];
  const resultParts: Part[] = [];
  for (let i = 0; i < calls; i++) {
    callParts.push({ functionCall: { id: `call_${i}`, name: 'read_file', args: { file_path: `/p/f${i}` } } });
    if (i % 2 === 0) resultParts.push({ functionResponse: { id: `call_${i}`, name: 'read_file', response: { output: `x${i}` } } });
  }
  const records: ChatRecord[] = [
    { ...base('u1', null), type: 'user', message: { role: 'user', parts: [{ text: 'read them all' }] } },
    { ...base('a1', 'u1'), type: 'assistant', message: { role: 'model', parts: callParts } },
    { ...base('r1', 'a1'), type: 'tool_result', message: { role: 'user', parts: resultParts } },
  ];
  return {
    sessionId: SID,
    leafUuid: 'r1',
    records,
    compressedHistory: null,
    totalRecords: records.length,
    writtenByMend: true,
    afterLastModel: { turnAborted: [], recoveryRecords: [], turnFailed: [], endedBy: null },
    sidechainRecords: 0,
    recordedCwd: null,
  };
}

/** A log whose assistant record is written in `pieces` fragments (one call each). */
export function fragmentedLog(pieces: number): string {
  const lines: string[] = [
    JSON.stringify({
      uuid: 'u1',
      parentUuid: null,
      sessionId: SID,
      timestamp: 't',
      type: 'user',
      version: 'mend/0.1.0',
      message: { role: 'user', parts: [{ text: 'go' }] },
    }),
  ];
  for (let i = 0; i < pieces; i++) {
    lines.push(
      JSON.stringify({
        uuid: 'a1',
        parentUuid: 'u1',
        sessionId: SID,
        timestamp: 't',
        type: 'assistant',
        version: 'mend/0.1.0',
        message: { role: 'model', parts: [{ functionCall: { id: `call_${i}`, name: 'read_file', args: { file_path: `/p/f${i}` } } }] },
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A full collection before each timed run, so each starts from the same clean heap and
 * the garbage of the previous run (or size) is not collected on this one's clock.
 * (`--expose-gc` set at run time; the bench is not started with it.)
 */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
}

async function timed(run: () => void | Promise<void>): Promise<number> {
  collect();
  const t = performance.now();
  await run();
  return performance.now() - t;
}

/**
 * Runs the small and the large case back to back `reps` times (after one warm-up of
 * each) and takes the median of the per-pair ratios: on a shared, busy machine a slow
 * phase then slows both halves of a pair alike.
 */
async function scaling(reps: number, small: () => void | Promise<void>, large: () => void | Promise<void>) {
  await timed(small);
  await timed(large);
  const smallMs: number[] = [];
  const largeMs: number[] = [];
  for (let r = 0; r < reps; r++) {
    smallMs.push(await timed(small));
    largeMs.push(await timed(large));
  }
  return { smallMs: median(smallMs), largeMs: median(largeMs), ratio: median(largeMs.map((x, i) => x / smallMs[i]!)) };
}

export interface ScalingFigure {
  name: string;
  small: number;
  large: number;
  smallMs: number;
  largeMs: number;
  /** largeMs / smallMs: about 10 when linear, about 100 when quadratic. */
  ratio: number;
}

/** Plan time over a last model entry with `n` and `10n` calls (medians of `reps` pairs). */
export async function planManyCalls(n: number, reps = 5): Promise<ScalingFigure> {
  const plan = (conversation: ConversationRecord) => (): void => {
    const p = buildPlanForSession({ conversation, historyGaps: [], diagnostics: [] });
    if (p.kind !== 'interrupted_turn') throw new Error(`unexpected kind ${p.kind}`);
  };
  const figure = await scaling(reps, plan(manyCallsConversation(n)), plan(manyCallsConversation(10 * n)));
  return { name: 'plan: last model entry with many calls', small: n, large: 10 * n, ...figure };
}

/** Read + load time of a record split into `n` and `10n` fragments (medians of `reps` pairs). */
export async function readManyFragments(n: number, reps = 5): Promise<ScalingFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'mend-bench-fragments-'));
  try {
    const load = (pieces: number) => {
      const path = join(dir, `${pieces}.jsonl`);
      writeFileSync(path, fragmentedLog(pieces));
      return async (): Promise<void> => {
        const loaded = buildConversation(await readSessionLog(path));
        if (loaded.conversation.records.length !== 2) throw new Error('fragments not merged');
      };
    };
    const figure = await scaling(reps, load(n), load(10 * n));
    return { name: 'read+load: one record in many fragments', small: n, large: 10 * n, ...figure };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
