/**
 * Plan checkpoints of sessions kept as rows (PostgreSQL): the file checkpoints' summary and
 * join (prefix-summary.ts) over seqs instead of bytes. The prefix is the rows before the cut
 * seq (the seq of the last model record of the active chain), the window the rows from it
 * on; a row's position in a window outline counts from the cut (line = seq - cut + 1), so a
 * summary's `linesBefore` is cut - 1 and its `windowStart` the cut seq.
 *
 * The store keeps the checkpoint in a row of its own (RowCheckpointSlot) and says whether it
 * still describes the session's rows (version, CRC, identity: src/store/postgres/pg-checkpoints.ts);
 * this file reads the window, joins, and makes the next checkpoint after the plan is handed
 * back. Nothing here is required: a checkpoint that cannot be read, parsed or joined is a
 * full pass with a note, and one that cannot be written (a read-only user, a server gone) a note.
 */
import type { RowCheckpointSlot, StoredRowCheckpoint } from '../../store/session-store.js';
import type { CheckpointHeader } from './checkpoint-file.js';
import { CHECKPOINT_VERSION } from './checkpoint-file.js';
import { cutOf, factsOf, planWindow, summarize, windowView, type ChainView, type PrefixSummary } from './prefix-summary.js';
import { UuidBloom } from './uuid-bloom.js';
import { alone, now, planner, snapshot, summaryPlanning, type CheckpointPlanInput, type PlannedLog, type Writing } from './window-planning.js';
import type { LoadedChain } from '../../session/conversation-loader.js';

type RowInput = CheckpointPlanInput<RowCheckpointSlot>;
type Note = (message: string) => void;

/** What the body of a checkpoint row holds (the store keeps it as text, with the uuid filter's bits beside it). */
interface RowBody {
  summary: PrefixSummary;
  bloom: { capacity: number; count: number };
  result: CheckpointHeader['result'];
}

function noteOf(slot: RowCheckpointSlot): Note {
  return (message) => slot.note?.(`plan checkpoint of ${slot.label}: ${message}`);
}

/** The session's plan (and listing facts) through its checkpoint row when one matches, else by a full pass. */
export async function planRows(input: RowInput, writing: Writing): Promise<PlannedLog> {
  const note = noteOf(input.slot);
  const { stored } = await storedCheckpoint(input.slot, note);
  if (stored !== null) {
    const kept = keptResult(input, stored);
    if (kept !== null) return kept;
    const warm = await fromCheckpoint(input, stored, note, writing);
    if (warm !== null) return warm;
  }
  return fullPass(input, note, writing);
}

/**
 * Brings the session's checkpoint up to date after a turn appended to it: through the
 * current one when it matches, else by a full pass only for a session of at most
 * `fullPassRows` rows. Never throws: it is a cache.
 */
export async function refreshRows(input: RowInput, fullPassRows: number): Promise<void> {
  const note = noteOf(input.slot);
  try {
    const { stored, lastSeq } = await storedCheckpoint(input.slot, note);
    if (stored !== null && keptResult(input, stored) !== null) return;
    if (stored !== null && (await fromCheckpoint(input, stored, note, now)) !== null) return;
    if (lastSeq !== null && lastSeq <= fullPassRows) await fullPass(input, note, now, fullPassRows);
  } catch (error) {
    note(`not refreshed (${(error as Error).message})`);
  }
}

type Stored = StoredRowCheckpoint & { parsed: RowBody };

/**
 * The stored checkpoint with its body parsed, or null (with a note when one was there but
 * cannot be used), and the session's last seq when known.
 */
async function storedCheckpoint(slot: RowCheckpointSlot, note: Note): Promise<{ stored: Stored | null; lastSeq: number | null }> {
  let read: Awaited<ReturnType<RowCheckpointSlot['read']>>;
  try {
    read = await slot.read(CHECKPOINT_VERSION);
  } catch (error) {
    note(`not read (${(error as Error).message}); reading the whole session`);
    return { stored: null, lastSeq: null };
  }
  if ('missing' in read) return { stored: null, lastSeq: read.lastSeq };
  if ('unusable' in read) {
    note(`not used (${read.unusable}); reading the whole session`);
    return { stored: null, lastSeq: read.lastSeq };
  }
  const unused = (why: string): { stored: null; lastSeq: number } => {
    note(`not used (${why}); reading the whole session`);
    return { stored: null, lastSeq: read.lastSeq };
  };
  let parsed: RowBody;
  try {
    parsed = JSON.parse(read.body) as RowBody;
  } catch {
    return unused('its body does not parse');
  }
  const summary = parsed?.summary;
  // The CRC vouches for the row; this only catches a body written for another cut.
  if (typeof summary !== 'object' || summary === null || summary.linesBefore !== read.cutSeq - 1 || summary.windowStart !== read.cutSeq) {
    return unused('its summary names another cut');
  }
  return { stored: { ...read, parsed }, lastSeq: read.lastSeq };
}

/** The plan the checkpoint keeps, when nothing was appended since, nobody holds the lease and the options match. */
function keptResult(input: RowInput, stored: Stored): PlannedLog | null {
  const kept = stored.parsed.result;
  if (kept === null || input.activeWriter !== null || stored.lastSeq !== stored.coveredSeq) return null;
  if (kept.allowAutoContinue !== (input.options?.allowAutoContinue === true)) return null;
  return { planned: snapshot(kept.planned), facts: { ...kept.facts } };
}

async function fromCheckpoint(input: RowInput, stored: Stored, note: Note, writing: Writing): Promise<PlannedLog | null> {
  const { slot } = input;
  const { summary } = stored.parsed;
  const grown = stored.lastSeq > stored.coveredSeq;
  const filter = async (): Promise<UuidBloom | null> => {
    const bits = await stored.readBloom();
    return bits === null ? null : UuidBloom.from(bits, stored.parsed.bloom.capacity, stored.parsed.bloom.count);
  };
  // Rows appended since are checked against the prefix's uuids; the window it was made with needs no check.
  const bloom = grown ? await filter() : null;
  if (grown && bloom === null) {
    note('not used (its uuid filter is torn); reading the whole session');
    return null;
  }
  const outline = await slot.readRows(stored.cutSeq, stored.lastSeq);
  const seen: { chain: LoadedChain | null } = { chain: null };
  const planned = planWindow(
    outline,
    summary,
    bloom,
    planner(input, (chain) => (seen.chain = chain)),
  );
  if ('refused' in planned) {
    note(`not used (${planned.refused}); reading the whole session`);
    return null;
  }
  const result: PlannedLog = { planned: planned.plan, facts: factsOf(outline, summary) };
  const stale = grown || (stored.parsed.result === null && input.activeWriter === null);
  if (stale && seen.chain !== null) {
    // Appended since (or its kept plan is missing): a checkpoint of the session as it is now, from the window just read.
    const view = windowView(seen.chain, outline, summary);
    const cut = cutOf(view);
    if (cut !== null) {
      // As handed back now: the caller owns the plan and may change it before the write runs.
      const whole = snapshot(result);
      const wholeReadDiagnostics = summary.readDiagnostics.length + outline.read.diagnostics.length;
      await writing(async () => {
        const prefixBloom = bloom ?? (await filter().catch(() => null));
        if (prefixBloom !== null) await store(input, note, whole, wholeReadDiagnostics, view, cut, prefixBloom, stored.lastSeq, stored.changes);
        else note('no checkpoint: the uuid filter of the one it extends is torn');
      });
    }
  }
  return result;
}

async function fullPass(input: RowInput, note: Note, writing: Writing, atMostRows = Number.POSITIVE_INFINITY): Promise<PlannedLog> {
  const { outline, lastSeq, changes } = await input.slot.readAll();
  const seen: { chain: LoadedChain | null } = { chain: null };
  const planned = planner(input, (chain) => (seen.chain = chain))(outline, alone)!;
  const origin = input.originOf(outline);
  if (origin) planned.loaded.conversation.origin = origin;
  const result: PlannedLog = { planned, facts: factsOf(outline, null) };
  if (seen.chain === null || changes === null || lastSeq > atMostRows) return result;
  const view: ChainView = { window: seen.chain, source: outline.source, cwd: (i) => outline.cwd(i), lineShift: 0, cwdBefore: null, headBefore: null };
  const cut = cutOf(view);
  if (cut === null) return result;
  // As handed back now: the caller owns the plan and may change it before the write runs.
  const whole = snapshot(result);
  await writing(() => store(input, note, whole, outline.read.diagnostics.length, view, cut, null, lastSeq, changes));
  return result;
}

/** Summarises the rows before the cut and writes the checkpoint row; a failure only leaves no (new) checkpoint. */
async function store(
  input: RowInput,
  note: Note,
  whole: PlannedLog,
  wholeReadDiagnostics: number,
  view: ChainView,
  cut: { k: number; line: number },
  bloom: UuidBloom | null,
  lastSeq: number,
  changes: number,
): Promise<void> {
  const { slot } = input;
  try {
    // Line numbers are seqs: the cut's line is its seq.
    const windowOutline = await slot.readRows(cut.line, lastSeq);
    const made = summarize({
      ...summaryPlanning(input, whole),
      wholeReadDiagnostics,
      view,
      cut,
      windowOutline,
      windowStart: cut.line,
      bloom,
    });
    if (made === null) {
      note('no checkpoint: this session cannot be summarised before its last model entry');
      return;
    }
    // The plan itself is kept for the next read of the unchanged session, when nobody held it.
    const result: RowBody['result'] =
      input.activeWriter === null ? { allowAutoContinue: input.options?.allowAutoContinue === true, planned: whole.planned, facts: whole.facts } : null;
    const body: RowBody = { summary: made.summary, bloom: { capacity: made.bloom.capacity, count: made.bloom.count }, result };
    const written = await slot.write({
      version: CHECKPOINT_VERSION,
      cutSeq: cut.line,
      coveredSeq: lastSeq,
      changes,
      body: JSON.stringify(body),
      bloom: made.bloom.bits,
    });
    if (!written) note('no checkpoint: the session changed while it was read');
  } catch (error) {
    note(`no checkpoint written (${(error as Error).message})`);
  }
}
