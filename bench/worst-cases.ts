/**
 * Worst cases that must stay linear (issue 9): planning a tail whose last model entry
 * holds many calls (classification, repair, continuation and notice), and reading a
 * record split into many fragments. Each is measured at n and 10n in the same run:
 * linear code costs about 10x, quadratic code about 100x. In-process, no child.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildPlanForSession } from '../src/recovery/build-plan.js';
import { buildConversation } from '../src/session/conversation-loader.js';
import type { ConversationRecord } from '../src/session/conversation.js';
import { readSessionLog } from '../src/session/log-reader.js';
import type { ChatRecord, Part } from '../src/session/records.js';

const SID = '11111111-2222-4333-8444-555555555555';

/** A prompt, then one model entry with `calls` calls; every other call has its result recorded. */
export function manyCallsConversation(calls: number): ConversationRecord {
  const base = (uuid: string, parentUuid: string | null) => ({ uuid, parentUuid, sessionId: SID, timestamp: '2026-01-01T00:00:00.000Z', version: 'mend/0.1.0' });
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
  };
}

/** A log whose assistant record is written in `pieces` fragments (one call each). */
export function fragmentedLog(pieces: number): string {
  const lines: string[] = [
    JSON.stringify({ uuid: 'u1', parentUuid: null, sessionId: SID, timestamp: 't', type: 'user', version: 'mend/0.1.0', message: { role: 'user', parts: [{ text: 'go' }] } }),
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

function best(reps: number, run: () => void): number {
  let min = Number.POSITIVE_INFINITY;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    run();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

async function bestAsync(reps: number, run: () => Promise<void>): Promise<number> {
  let min = Number.POSITIVE_INFINITY;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    await run();
    min = Math.min(min, performance.now() - t);
  }
  return min;
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

/** Plan time over a last model entry with `n` and `10n` calls (best of `reps`). */
export function planManyCalls(n: number, reps = 3): ScalingFigure {
  const time = (calls: number): number => {
    const conversation = manyCallsConversation(calls);
    return best(reps, () => {
      const plan = buildPlanForSession({ conversation, historyGaps: [], diagnostics: [] });
      if (plan.kind !== 'interrupted_turn') throw new Error(`unexpected kind ${plan.kind}`);
    });
  };
  const smallMs = time(n);
  const largeMs = time(10 * n);
  return { name: 'plan: last model entry with many calls', small: n, large: 10 * n, smallMs, largeMs, ratio: largeMs / smallMs };
}

/** Read + load time of a record split into `n` and `10n` fragments (best of `reps`). */
export async function readManyFragments(n: number, reps = 3): Promise<ScalingFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'mend-bench-fragments-'));
  try {
    const time = async (pieces: number): Promise<number> => {
      const path = join(dir, `${pieces}.jsonl`);
      writeFileSync(path, fragmentedLog(pieces));
      return bestAsync(reps, async () => {
        const loaded = buildConversation(await readSessionLog(path));
        if (loaded.conversation.records.length !== 2) throw new Error('fragments not merged');
      });
    };
    const smallMs = await time(n);
    const largeMs = await time(10 * n);
    return { name: 'read+load: one record in many fragments', small: n, large: 10 * n, smallMs, largeMs, ratio: largeMs / smallMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
