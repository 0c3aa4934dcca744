/**
 * Plan checkpoints: the recovery line of a log mend has read before, reading only what
 * lies after the log's last model entry (the window) and what was appended since.
 *
 * The one interface of this folder (nothing else here is imported from outside it). The
 * oracle is the plain pass: `loadPlanHead` without a checkpoint slot reads the whole log
 * (src/runtime/load-and-plan.ts); every plan this gives must equal that one
 * (test/runtime/plan-checkpoints.test.ts mutates logs every way it can and compares).
 *
 * A checkpoint is a cache, never a source of truth: versioned, tied to the bytes it
 * describes (log-identity.ts), written to mend's cache by any read that had to read more
 * than the window (temp file + rename, no fsync), and only written once joining it to its
 * window gave back the whole log's plan (prefix-summary.ts). Anything that does not match
 * (no checkpoint, another version, a torn one, a log replaced, truncated, rewritten or
 * appended in a way the window cannot join) is a full pass with a note. The switch:
 * MEND_CHECKPOINTS=0 (read in src/cli), which gives the store no checkpoint slots.
 */
import { stat } from 'node:fs/promises';
import type { SessionOrigin } from '../../session/conversation.js';
import type { BuildOptions, LoadedChain } from '../../session/conversation-loader.js';
import { outlineReader, type SessionOutline } from '../../session/outline/history-reader.js';
import type { BuildPlanInput } from '../../recovery/plan-types.js';
import type { PlanCheckpointSlot } from '../../store/session-store.js';
import { planFromOutline, type OutlinePlan, type PrefixJoin } from '../outline-plan.js';
import { readCheckpointBloom, readCheckpointHeader, writeCheckpoint, type CheckpointHeader } from './checkpoint-file.js';
import { bytesFromLine, identifyLog, lineOffset, openIdentified } from './log-identity.js';
import { cutOf, planWindow, summarize, type ChainView, type PlanWindow } from './prefix-summary.js';
import type { UuidBloom } from './uuid-bloom.js';

export type { PlanCheckpointSlot };

export interface CheckpointPlanInput {
  slot: PlanCheckpointSlot;
  build: BuildOptions;
  options: BuildPlanInput['options'];
  activeWriter: BuildPlanInput['activeWriter'];
  /** The origin loadPlanHead gives a log (its first record's import provenance). */
  originOf: (outline: SessionOutline) => SessionOrigin | undefined;
}

/**
 * What a plan over a log gives, through its checkpoint when one matches. A checkpoint that
 * was not current is written after the plan is handed back (the next macrotask: a process
 * that ends naturally still writes it; settledCheckpointWrites waits for it).
 */
export async function planWithCheckpoint(input: CheckpointPlanInput): Promise<OutlinePlan> {
  const { slot } = input;
  const note = (message: string): void => slot.note?.(`plan checkpoint of ${slot.path}: ${message}`);
  const read = await readCheckpointHeader(slot.cacheFile);
  if ('header' in read) {
    const warm = await fromCheckpoint(input, read.header, note, later);
    if (warm !== null) return warm;
  } else if ('damaged' in read) note(`not used (${read.damaged}); reading the whole log`);
  return fullPass(input, note, later);
}

/** How a checkpoint write is run: now (awaited) or after the plan is handed back. */
type Writing = (write: () => Promise<void>) => Promise<void>;

const pending = new Set<Promise<void>>();
const now: Writing = (write) => write();
const later: Writing = (write) => {
  const done = new Promise<void>((resolve) => setImmediate(resolve)).then(write);
  pending.add(done);
  void done.finally(() => pending.delete(done));
  return Promise.resolve();
};

/** Resolves once every checkpoint write started so far has ended (written or not). */
export async function settledCheckpointWrites(): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}

/**
 * Brings the log's checkpoint up to date after a turn appended to it (SessionRuntime, off
 * the turn's path): through the current checkpoint when one matches, else by a full pass
 * only for a log of at most `fullPassBytes` (a new session gets its checkpoint early; a
 * long log without one waits for the next read). Never throws: it is a cache.
 */
export async function refreshCheckpoint(input: CheckpointPlanInput, fullPassBytes: number): Promise<void> {
  const { slot } = input;
  const note = (message: string): void => slot.note?.(`plan checkpoint of ${slot.path}: ${message}`);
  try {
    const read = await readCheckpointHeader(slot.cacheFile);
    if ('header' in read && (await fromCheckpoint(input, read.header, note, now)) !== null) return;
    if ((await stat(slot.path)).size <= fullPassBytes) await fullPass(input, note, now);
  } catch (error) {
    note(`not refreshed (${(error as Error).message})`);
  }
}

/** A plan over the outline that also hands over the chain it was built on. */
function planner(input: CheckpointPlanInput, seen: (chain: LoadedChain) => void): PlanWindow {
  return (outline, join) =>
    planFromOutline(outline, input.build, input.options, input.activeWriter, (window, source) => {
      seen(window);
      return join(window, source);
    });
}

/** A join that changes nothing: the log is its own window. */
const alone: PrefixJoin = (window) => ({ loaded: window.loaded, before: { repairs: [], entries: 0 }, cwd: null });

async function fromCheckpoint(
  input: CheckpointPlanInput,
  header: CheckpointHeader,
  note: (message: string) => void,
  writing: Writing,
): Promise<OutlinePlan | null> {
  const { slot } = input;
  const summary = header.summary;
  const opened = await openIdentified(slot.path, header.log);
  if ('mismatch' in opened) {
    note(`not used (${opened.mismatch}); reading the whole log`);
    return null;
  }
  let bloom: UuidBloom | null = null;
  if (opened.grown) {
    bloom = await readCheckpointBloom(slot.cacheFile, header);
    if (bloom === null) {
      note('not used (its uuid filter is torn); reading the whole log');
      return null;
    }
  }
  const window = opened.bytes.subarray(summary.windowStart - header.log.tailStart);
  const outline = await outlineReader.readBytes(window, slot.readOptions);
  const seen: { chain: LoadedChain | null } = { chain: null };
  const plan = planner(input, (chain) => (seen.chain = chain));
  const planned = planWindow(outline, summary, bloom, plan);
  if ('refused' in planned) {
    note(`not used (${planned.refused}); reading the whole log`);
    return null;
  }
  if (opened.grown && seen.chain !== null && bloom !== null) {
    // Appended since: a checkpoint of the log as it is now, from the window just read.
    const view: ChainView = { window: seen.chain, source: outline.source, cwd: (i) => outline.cwd(i), lineShift: summary.linesBefore, cwdBefore: summary.cwd };
    const wholeReadDiagnostics = summary.readDiagnostics.length + outline.read.diagnostics.length;
    const cut = cutOf(view);
    const offset = cut === null ? -1 : lineOffset(window, cut.line - summary.linesBefore);
    if (cut !== null && offset >= 0) {
      const windowStart = summary.windowStart + offset;
      const next = window.subarray(offset, opened.size - summary.windowStart);
      // As handed back now: the caller owns the plan and may change it before the write runs.
      const plan = snapshot(planned.plan);
      await writing(() => store(input, note, plan, wholeReadDiagnostics, view, cut, next, windowStart, opened.size, bloom));
    }
  }
  return planned.plan;
}

async function fullPass(input: CheckpointPlanInput, note: (message: string) => void, writing: Writing): Promise<OutlinePlan> {
  const { slot } = input;
  const outline = await outlineReader.read(slot.path, slot.readOptions);
  const seen: { chain: LoadedChain | null } = { chain: null };
  const planned = planner(input, (chain) => (seen.chain = chain))(outline, alone)!;
  const origin = input.originOf(outline);
  if (origin) planned.loaded.conversation.origin = origin;
  if (seen.chain === null) return planned;
  const view: ChainView = { window: seen.chain, source: outline.source, cwd: (i) => outline.cwd(i), lineShift: 0, cwdBefore: null };
  const cut = cutOf(view);
  if (cut === null) return planned;
  const read = outline.read;
  const newlines = read.endsWithNewline ? read.lines : Math.max(0, read.lines - 1);
  // As handed back now: the caller owns the plan and may change it before the write runs.
  const whole = snapshot(planned);
  const write = async (): Promise<void> => {
    const window = await bytesFromLine(slot.path, read.bytes, newlines, cut.line).catch(() => null);
    if (window !== null) await store(input, note, whole, read.diagnostics.length, view, cut, window.bytes, window.start, read.bytes, null);
  };
  await writing(write);
  return planned;
}

/** Summarises the log up to `bytes` and writes its checkpoint; a failure only leaves no (new) checkpoint. */
async function store(
  input: CheckpointPlanInput,
  note: (message: string) => void,
  whole: OutlinePlan,
  wholeReadDiagnostics: number,
  view: ChainView,
  cut: { k: number; line: number },
  window: Buffer,
  windowStart: number,
  bytes: number,
  bloom: UuidBloom | null,
): Promise<void> {
  const { slot } = input;
  try {
    const windowOutline = await outlineReader.readBytes(window, slot.readOptions);
    const made = summarize({
      whole,
      wholeReadDiagnostics,
      view,
      cut,
      windowOutline,
      windowStart,
      bloom,
      plan: planner(input, () => undefined),
      planAlone: (outline) => planFromOutline(outline, input.build, input.options, input.activeWriter, alone)!,
    });
    if (made === null) {
      note('no checkpoint: this log cannot be summarised before its last model entry');
      return;
    }
    const identified = await identifyLog(slot.path, bytes, windowStart);
    if (identified === null || !identified.window.equals(window)) {
      note('no checkpoint: the log changed while it was read');
      return;
    }
    await writeCheckpoint(slot.cacheFile, identified.identity, made.summary, made.bloom);
  } catch (error) {
    note(`no checkpoint written (${(error as Error).message})`);
  }
}

function snapshot<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
