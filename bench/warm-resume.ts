/**
 * Warm resumes (plan checkpoints, src/runtime/checkpoint): spawn -> system/recovery of a
 * session mend has read before, at 10, 100k and (with --large) 1M records, with plan
 * checkpoints on and, in the same run, off (MEND_CHECKPOINTS=0: every resume reads the
 * whole log). Also a resume right after a turn was appended to the 100k-record log (the
 * checkpoint is then joined with what was appended) and the cold resume with and without
 * writing a checkpoint.
 */
import { appendFileSync, copyFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { QwenSession } from './qwen-session.js';

export interface Timing {
  ms: number;
  line?: Record<string, unknown>;
}

export type SpawnRecovery = (path: string, env: NodeJS.ProcessEnv) => Promise<Timing>;

export interface WarmFigures {
  labels: string[];
  /** Per session (in `labels` order), per repetition. */
  on: number[][];
  off: number[][];
  planIds: string[];
}

/** Clears mend's cache under the home (every checkpoint). */
export function clearCheckpoints(home: string): void {
  rmSync(join(home, 'cache'), { recursive: true, force: true });
}

/** Warm resumes of each session, checkpoints on and off, in alternating order. */
export async function measureWarm(sessions: QwenSession[], reps: number, home: string, spawnRecovery: SpawnRecovery): Promise<WarmFigures> {
  const on = { ...process.env, MEND_HOME: home };
  const off = { ...on, MEND_CHECKPOINTS: '0' };
  clearCheckpoints(home);
  const planIds = new Set<string>();
  // One read each fills the cache.
  for (const s of sessions) planIds.add((await spawnRecovery(s.path, on)).line?.['plan_id'] as string);
  const figures: WarmFigures = { labels: sessions.map((s) => s.label), on: sessions.map(() => []), off: sessions.map(() => []), planIds: [] };
  for (let rep = 0; rep < reps; rep++) {
    const steps: Array<() => Promise<void>> = [];
    sessions.forEach((s, i) => {
      steps.push(async () => {
        const t = await spawnRecovery(s.path, on);
        planIds.add(t.line?.['plan_id'] as string);
        figures.on[i]!.push(t.ms);
      });
      steps.push(async () => void figures.off[i]!.push((await spawnRecovery(s.path, off)).ms));
    });
    if (rep % 2 === 1) steps.reverse();
    for (const step of steps) await step();
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  figures.planIds = [...planIds];
  if (planIds.size !== sessions.length) throw new Error(`warm resumes: plan ids differ between runs (${[...planIds].join(', ')})`);
  return figures;
}

export interface AppendFigures {
  /** Resume right after a turn was appended: checkpoint on (joined), off (whole log). */
  on: number[];
  off: number[];
  /** Cold resume (no checkpoint yet) writing one, and with checkpoints off. */
  coldOn: number[];
  coldOff: number[];
}

/**
 * A copy of the session in `dir`: each repetition appends one turn (a prompt, a model entry
 * with a call, its result) and resumes it; and cold resumes (cache cleared) with checkpoints
 * on (the read writes one) and off.
 */
export async function measureAppend(session: QwenSession, reps: number, home: string, dir: string, spawnRecovery: SpawnRecovery): Promise<AppendFigures> {
  const path = join(dir, `${session.sessionId}.jsonl`);
  copyFileSync(session.path, path);
  const on = { ...process.env, MEND_HOME: home };
  const off = { ...on, MEND_CHECKPOINTS: '0' };
  const figures: AppendFigures = { on: [], off: [], coldOn: [], coldOff: [] };
  try {
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    const last = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    let parent = last['uuid'] as string;
    let n = 0;
    const appendTurn = (): void => {
      const base = { sessionId: session.sessionId, timestamp: new Date().toISOString(), cwd: last['cwd'], version: last['version'] };
      const records: Array<Record<string, unknown>> = [];
      const push = (record: Record<string, unknown>): void => {
        const uuid = `bench-append-${n}-${records.length}`;
        records.push({ ...base, uuid, parentUuid: parent, ...record });
        parent = uuid;
      };
      const id = `bench_call_${n}`;
      push({ type: 'user', message: { role: 'user', parts: [{ text: `one more thing ${n}` }] } });
      push({
        type: 'assistant',
        message: { role: 'model', parts: [{ text: 'Reading.' }, { functionCall: { id, name: 'read_file', args: { absolute_path: '/tmp/x' } } }] },
      });
      push({ type: 'tool_result', message: { role: 'user', parts: [{ functionResponse: { id, name: 'read_file', response: { output: 'x' } } }] } });
      n++;
      appendFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    };
    clearCheckpoints(home);
    await spawnRecovery(path, on);
    for (let rep = 0; rep < reps; rep++) {
      const steps: Array<() => Promise<void>> = [
        async () => {
          appendTurn();
          figures.on.push((await spawnRecovery(path, on)).ms);
        },
        async () => {
          appendTurn();
          figures.off.push((await spawnRecovery(path, off)).ms);
        },
        async () => {
          clearCheckpoints(home);
          figures.coldOn.push((await spawnRecovery(path, on)).ms);
        },
        async () => void figures.coldOff.push((await spawnRecovery(path, off)).ms),
      ];
      if (rep % 2 === 1) steps.reverse();
      for (const step of steps) await step();
      process.stderr.write('.');
    }
    process.stderr.write('\n');
  } finally {
    rmSync(path, { force: true });
  }
  return figures;
}
