/**
 * What file and row checkpoints share: the input of a plan through a checkpoint, the
 * planner that also hands over the chain a window was loaded into, the join of a log that
 * is its own window, and how a checkpoint write runs after the plan is handed back.
 */
import type { SessionOrigin } from '../../session/conversation.js';
import type { BuildOptions, LoadedChain } from '../../session/conversation-loader.js';
import type { SessionOutline } from '../../session/outline/history-reader.js';
import type { BuildPlanInput } from '../../recovery/plan-types.js';
import type { CheckpointSlot } from '../../store/session-store.js';
import { planFromOutline, type OutlinePlan, type PrefixJoin } from '../outline-plan.js';
import type { LogFacts, PlanWindow, SummarizeInput } from './prefix-summary.js';

export interface CheckpointPlanInput<Slot extends CheckpointSlot = CheckpointSlot> {
  slot: Slot;
  build: BuildOptions;
  options: BuildPlanInput['options'];
  activeWriter: BuildPlanInput['activeWriter'];
  /** The origin loadPlanHead gives a log (its first record's import provenance). */
  originOf: (outline: SessionOutline) => SessionOrigin | undefined;
}

export interface PlannedLog {
  planned: OutlinePlan;
  facts: LogFacts;
}

/** A plan over the outline that also hands over the chain it was built on. */
export function planner(input: CheckpointPlanInput, seen: (chain: LoadedChain) => void): PlanWindow {
  return (outline, join) =>
    planFromOutline(outline, input.build, input.options, input.activeWriter, (window, source) => {
      seen(window);
      return join(window, source);
    });
}

/** A join that changes nothing: the log is its own window. */
export const alone: PrefixJoin = (window) => ({ loaded: window.loaded, before: { repairs: [], entries: 0 }, cwd: null });

/** What `summarize` takes from the plan it must reproduce and from how this input plans. */
export function summaryPlanning(input: CheckpointPlanInput, whole: PlannedLog): Pick<SummarizeInput, 'whole' | 'wholeFacts' | 'plan' | 'planAlone'> {
  return {
    whole: whole.planned,
    wholeFacts: whole.facts,
    plan: planner(input, () => undefined),
    planAlone: (outline) => planFromOutline(outline, input.build, input.options, input.activeWriter, alone)!,
  };
}

/** How a checkpoint write is run: now (awaited) or after the plan is handed back. */
export type Writing = (write: () => Promise<void>) => Promise<void>;

const pending = new Set<Promise<void>>();
export const now: Writing = (write) => write();
export const later: Writing = (write) => {
  const done = new Promise<void>((resolve) => setImmediate(resolve)).then(write);
  pending.add(done);
  void done.finally(() => pending.delete(done));
  return Promise.resolve();
};

/** Resolves once every checkpoint write started so far has ended (written or not). */
export async function settledCheckpointWrites(): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}

export function snapshot<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
