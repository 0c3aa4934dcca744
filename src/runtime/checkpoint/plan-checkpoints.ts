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
 *
 * A PostgreSQL session's checkpoint is a row (row-checkpoints.ts): the same summary and
 * join, cut at a seq instead of a byte offset, its identity checked by the store.
 */
import { stat } from 'node:fs/promises';
import type { LoadedChain } from '../../session/conversation-loader.js';
import { outlineReader, type SessionOutline } from '../../session/outline/history-reader.js';
import type { CheckpointSlot, PlanCheckpointSlot, RowCheckpointSlot } from '../../store/session-store.js';
import type { OutlinePlan } from '../outline-plan.js';
import { readCheckpointBloom, readCheckpointHeader, writeCheckpoint, type CheckpointHeader } from './checkpoint-file.js';
import { bytesFromLine, identifyLog, lineOffset, openIdentified, statLog } from './log-identity.js';
import { cutOf, factsOf, planWindow, summarize, windowView, type ChainView, type LogFacts } from './prefix-summary.js';
import { planRows, refreshRows } from './row-checkpoints.js';
import type { UuidBloom } from './uuid-bloom.js';
import { alone, later, now, planner, snapshot, summaryPlanning, type CheckpointPlanInput, type PlannedLog, type Writing } from './window-planning.js';

export type { CheckpointSlot, PlanCheckpointSlot };
export type { CheckpointPlanInput, PlannedLog };
export { settledCheckpointWrites } from './window-planning.js';

/** A plan through a log's checkpoint file. */
type FileInput = CheckpointPlanInput<PlanCheckpointSlot>;

/**
 * The shortest log that gets a checkpoint: below it a full pass costs about what reading a
 * checkpoint and its window does (a 64 KiB log is a few hundred records, planned in a
 * millisecond or two), and a daemon of many short sessions would spend its loop refreshing
 * checkpoints nobody needs.
 */
export const DEFAULT_CHECKPOINT_MIN_BYTES = 64 * 1024;

function minBytesOf(slot: PlanCheckpointSlot): number {
  return slot.minBytes ?? DEFAULT_CHECKPOINT_MIN_BYTES;
}

function isRows(input: CheckpointPlanInput): input is CheckpointPlanInput<RowCheckpointSlot> {
  return input.slot.kind === 'rows';
}

/**
 * What a plan over a log gives, through its checkpoint when one matches. A checkpoint that
 * was not current is written after the plan is handed back (the next macrotask: a process
 * that ends naturally still writes it; settledCheckpointWrites waits for it).
 */
export async function planWithCheckpoint(input: CheckpointPlanInput): Promise<OutlinePlan> {
  return (await planAndFacts(input)).planned;
}

/** The plan and what a session listing shows of the log (planWithCheckpoint's, with its facts). */
export async function planAndFacts(input: CheckpointPlanInput): Promise<PlannedLog> {
  // A session kept as rows (PostgreSQL): its checkpoint is a row (row-checkpoints.ts).
  if (isRows(input)) return planRows(input, later);
  return planFile(input as FileInput);
}

async function planFile(input: FileInput): Promise<PlannedLog> {
  const { slot } = input;
  const note = (message: string): void => slot.note?.(`plan checkpoint of ${slot.path}: ${message}`);
  const read = await readCheckpointHeader(slot.cacheFile);
  if ('header' in read) {
    const kept = await keptResult(input, read.header);
    if (kept !== null) return kept;
    const warm = await fromCheckpoint(input, read.header, note, later);
    if (warm !== null) return warm;
  } else if ('damaged' in read) note(`not used (${read.damaged}); reading the whole log`);
  return fullPass(input, note, later);
}

export type { LogFacts };

/** What a listing shows of a log, from its whole outline (the same facts a checkpoint keeps). */
export function outlineFacts(outline: SessionOutline): LogFacts {
  return factsOf(outline, null);
}

/**
 * How long after a log last changed its times are trusted alone: a change within the file
 * system's timestamp granularity of the checkpoint's making may leave them equal.
 */
const RACY_MS = 2000;

/**
 * The plan the checkpoint keeps, when it asks for nothing more than the times of the log:
 * the log is the same length with the same modification and change times (not racily
 * close to when the checkpoint was made), nobody holds its lease and the options match.
 */
async function keptResult(input: FileInput, header: CheckpointHeader): Promise<PlannedLog | null> {
  const kept = header.result;
  if (kept === null || input.activeWriter !== null || kept.allowAutoContinue !== (input.options?.allowAutoContinue === true)) return null;
  const log = header.log;
  if (log.mtimeNs === null || log.ctimeNs === null || isRacy(log.madeAtMs, log.mtimeNs, log.ctimeNs)) return null;
  const stat = await statLog(input.slot.path);
  if (
    stat === null ||
    stat.dev !== log.dev ||
    stat.ino !== log.ino ||
    stat.size !== log.bytes ||
    stat.mtimeNs !== log.mtimeNs ||
    stat.ctimeNs !== log.ctimeNs
  ) {
    return null;
  }
  return { planned: snapshot(kept.planned), facts: { ...kept.facts } };
}

function isRacy(madeAtMs: number, mtimeNs: string, ctimeNs: string): boolean {
  const changedMs = Number((BigInt(mtimeNs) > BigInt(ctimeNs) ? BigInt(mtimeNs) : BigInt(ctimeNs)) / 1_000_000n);
  return madeAtMs - changedMs < RACY_MS;
}

/**
 * Brings the log's checkpoint up to date after a turn appended to it (SessionRuntime, off
 * the turn's path): through the current checkpoint when one matches, else by a full pass
 * only for a log of at most `fullPassBytes` (a new session gets its checkpoint early; a
 * long log without one waits for the next read). A log shorter than the slot's minBytes
 * is left alone (one stat). Never throws: it is a cache.
 */
export async function refreshCheckpoint(input: CheckpointPlanInput, fullPass: { bytes: number; rows: number }): Promise<void> {
  if (isRows(input)) return refreshRows(input, fullPass.rows);
  await refreshFile(input as FileInput, fullPass.bytes);
}

async function refreshFile(input: FileInput, fullPassBytes: number): Promise<void> {
  const { slot } = input;
  const note = (message: string): void => slot.note?.(`plan checkpoint of ${slot.path}: ${message}`);
  try {
    const size = (await stat(slot.path)).size;
    if (size < minBytesOf(slot)) return;
    const read = await readCheckpointHeader(slot.cacheFile);
    if ('header' in read && (await keptResult(input, read.header)) !== null) return;
    if ('header' in read && (await fromCheckpoint(input, read.header, note, now)) !== null) return;
    if (size <= fullPassBytes) await fullPass(input, note, now);
  } catch (error) {
    note(`not refreshed (${(error as Error).message})`);
  }
}

async function fromCheckpoint(input: FileInput, header: CheckpointHeader, note: (message: string) => void, writing: Writing): Promise<PlannedLog | null> {
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
  const facts = factsOf(outline, summary);
  const result: PlannedLog = { planned: planned.plan, facts };
  const unkept = header.result === null || (header.log.mtimeNs !== null && isRacy(header.log.madeAtMs, header.log.mtimeNs, header.log.ctimeNs!));
  const stale = opened.grown || (unkept && input.activeWriter === null && !opened.grown);
  if (stale && seen.chain !== null && opened.size >= minBytesOf(slot)) {
    // Appended since (or its kept plan is missing or was made racily): a checkpoint of the
    // log as it is now, from the window just read.
    const view = windowView(seen.chain, outline, summary);
    const wholeReadDiagnostics = summary.readDiagnostics.length + outline.read.diagnostics.length;
    const cut = cutOf(view);
    const offset = cut === null ? -1 : lineOffset(window, cut.line - summary.linesBefore);
    if (cut !== null && offset >= 0) {
      const windowStart = summary.windowStart + offset;
      const next = window.subarray(offset, opened.size - summary.windowStart);
      // As handed back now: the caller owns the plan and may change it before the write runs.
      const whole = snapshot(result);
      const prefixBloom = bloom;
      await writing(async () => {
        const filter = prefixBloom ?? (await readCheckpointBloom(slot.cacheFile, header));
        if (filter !== null) await store(input, note, whole, wholeReadDiagnostics, view, cut, next, windowStart, opened.size, filter);
      });
    }
  }
  return result;
}

async function fullPass(input: FileInput, note: (message: string) => void, writing: Writing): Promise<PlannedLog> {
  const { slot } = input;
  const outline = await outlineReader.read(slot.path, slot.readOptions);
  const seen: { chain: LoadedChain | null } = { chain: null };
  const planned = planner(input, (chain) => (seen.chain = chain))(outline, alone)!;
  const origin = input.originOf(outline);
  if (origin) planned.loaded.conversation.origin = origin;
  const result: PlannedLog = { planned, facts: factsOf(outline, null) };
  if (seen.chain === null || outline.read.bytes < minBytesOf(slot)) return result;
  const view: ChainView = { window: seen.chain, source: outline.source, cwd: (i) => outline.cwd(i), lineShift: 0, cwdBefore: null, headBefore: null };
  const cut = cutOf(view);
  if (cut === null) return result;
  const read = outline.read;
  const newlines = read.endsWithNewline ? read.lines : Math.max(0, read.lines - 1);
  // As handed back now: the caller owns the plan and may change it before the write runs.
  const whole = snapshot(result);
  const write = async (): Promise<void> => {
    const window = await bytesFromLine(slot.path, read.bytes, newlines, cut.line).catch(() => null);
    if (window !== null) await store(input, note, whole, read.diagnostics.length, view, cut, window.bytes, window.start, read.bytes, null);
  };
  await writing(write);
  return result;
}

/** Summarises the log up to `bytes` and writes its checkpoint; a failure only leaves no (new) checkpoint. */
async function store(
  input: FileInput,
  note: (message: string) => void,
  whole: PlannedLog,
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
      ...summaryPlanning(input, whole),
      wholeReadDiagnostics,
      view,
      cut,
      windowOutline,
      windowStart,
      bloom,
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
    // The plan itself is kept for the next read of the unchanged log (keptResult), when nobody held it.
    const result =
      input.activeWriter === null ? { allowAutoContinue: input.options?.allowAutoContinue === true, planned: whole.planned, facts: whole.facts } : null;
    await writeCheckpoint(slot.cacheFile, identified.identity, made.summary, made.bloom, result);
  } catch (error) {
    note(`no checkpoint written (${(error as Error).message})`);
  }
}
