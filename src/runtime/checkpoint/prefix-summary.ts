/**
 * What a plan checkpoint knows of a log's prefix, and how a plan over the rest joins it.
 *
 * The log is cut at the last model entry of its active chain that the repair surely
 * keeps (the cut): everything before the cut's line is the prefix, summarised here; from
 * the cut's line on is the window, read and planned like any log (the same reader,
 * loader and planner). The window's own load stops at the cut (its parent lies in the
 * prefix): the summary stands for the rest: the records, diagnostics and gaps before it,
 * the compressed history, and what the plan lists and counts for the history entries
 * before the cut (HistoryBefore).
 *
 * A join is refused (null, then the log is read whole) whenever the window might not
 * continue the prefix exactly: the window's chain does not end at the cut, a window record
 * may reuse a prefix uuid (a late fragment, a repeated line) or supply a parent the
 * prefix's walk found missing, another session id, a compression or a parent cycle in
 * the window, a result in the window that no call of the window answers (it may answer
 * one of the prefix). A summary is only written after it reproduced the plan of the
 * whole log it describes (summarize).
 */
import { isDeepStrictEqual } from 'node:util';
import type { HistoryBefore } from '../../recovery/plan-types.js';
import type { LoadedChain } from '../../session/conversation-loader.js';
import type { HistoryGap, LoadDiagnostic, SessionOrigin } from '../../session/conversation.js';
import type { SessionOutline } from '../../session/outline/history-reader.js';
import { isEmptyPart, isThoughtPart } from '../../session/model-entry.js';
import { SystemSubtype } from '../../session/record-kinds.js';
import type { ChatRecord, Content } from '../../session/records.js';
import type { OutlinePlan, PrefixJoin } from '../outline-plan.js';
import { UuidBloom } from './uuid-bloom.js';

export interface PrefixSummary {
  sessionId: string;
  /** Byte offset of the window (the start of the cut's line) and the lines before it. */
  windowStart: number;
  linesBefore: number;
  cutUuid: string;
  cutParentUuid: string | null;
  /** Records (fragments merged, sidechain ones included) and sidechain records before the window. */
  records: number;
  sidechainRecords: number;
  /** The reader's diagnostics of the prefix's lines. */
  readDiagnostics: LoadDiagnostic[];
  /** What the chain walk reported behind the cut. */
  walkDiagnostics: LoadDiagnostic[];
  historyGaps: HistoryGap[];
  compressedHistory: Content[] | null;
  /** The cwd of the last chain record before the cut that names one. */
  cwd: string | null;
  before: HistoryBefore;
  origin?: SessionOrigin;
  /** What a listing shows of the prefix: its first record's time and its first prompt (null: no user record in it). */
  head: { started: string | null; firstUser: { text: string | null } | null };
}

/** What a session listing shows of a log besides its plan (SessionListing's fields). */
export interface LogFacts {
  records: number;
  started: string | null;
  lastUpdate: string | null;
  firstPrompt: string | null;
}

/** The first text of a user record, as a listing shows it. */
function promptOf(record: ChatRecord): string | null {
  const text = record.type === 'user' ? record.message.parts.find((p) => typeof p.text === 'string')?.text : undefined;
  return text === undefined ? null : text.slice(0, 200);
}

/**
 * The listing facts of a log from its outline (the whole log's, or a window's after `summary`'s
 * prefix): its records, the time of its first and last record, and its first prompt.
 */
export function factsOf(outline: SessionOutline, summary: PrefixSummary | null): LogFacts {
  const source = outline.source;
  const n = source.count;
  const before = summary?.records ?? 0;
  const started = before > 0 ? summary!.head.started : n > 0 ? (source.full([0])[0]!.timestamp ?? null) : null;
  let firstPrompt: string | null = null;
  if (summary?.head.firstUser) firstPrompt = summary.head.firstUser.text;
  else {
    for (let i = 0; i < n; i++) {
      if (source.type(i) !== 'user') continue;
      firstPrompt = promptOf(source.full([i])[0]!);
      break;
    }
  }
  return { records: before + n, started, lastUpdate: n > 0 ? (source.full([n - 1])[0]!.timestamp ?? null) : null, firstPrompt };
}

/** A window's plan joined to a summary, or why it cannot be. */
export type WindowPlan = { plan: OutlinePlan } | { refused: string };

export type PlanWindow = (outline: SessionOutline, join: PrefixJoin) => OutlinePlan | null;

/**
 * The plan of the log from a summary and its window's outline. `bloom`: the prefix's
 * uuids, to check window records against (null: the window is the one the summary was
 * checked with, nothing appended).
 */
export function planWindow(outline: SessionOutline, summary: PrefixSummary, bloom: UuidBloom | null, plan: PlanWindow): WindowPlan {
  let refused = '';
  const join: PrefixJoin = (window, source) => {
    refused = joinRefusal(window, source, outline, summary, bloom);
    if (refused !== '') return null;
    const w = window.loaded;
    const readCount = outline.read.diagnostics.length;
    const shift = (d: LoadDiagnostic): LoadDiagnostic => ('line' in d ? { ...d, line: d.line + summary.linesBefore } : d);
    const conversation = {
      ...w.conversation,
      compressedHistory: summary.compressedHistory,
      totalRecords: summary.records + w.conversation.totalRecords,
      sidechainRecords: summary.sidechainRecords + (w.conversation.sidechainRecords ?? 0),
    };
    const diagnostics = [
      ...summary.readDiagnostics,
      ...w.diagnostics.slice(0, readCount).map(shift),
      ...summary.walkDiagnostics,
      ...w.diagnostics.slice(readCount),
    ];
    return { loaded: { conversation, historyGaps: summary.historyGaps, diagnostics }, before: summary.before, cwd: summary.cwd };
  };
  const planned = plan(outline, join);
  if (planned === null) return { refused: refused || 'the window does not continue the prefix' };
  // A result in the window that no call of the window answers may answer one of the
  // prefix (its repair would then differ): only the whole log can tell.
  const liveGaps = summary.historyGaps.filter((g) => !g.beforeCheckpoint).length;
  const own = planned.plan.repairs.slice(liveGaps + summary.before.repairs.length);
  const unpaired = own.find((r) => r.type === 'dropped_orphan_tool_result' || r.type === 'renamed_tool_result');
  if (unpaired !== undefined) return { refused: `a result in the window answers no call of the window (${unpaired.type})` };
  if (summary.origin !== undefined) planned.loaded.conversation.origin = summary.origin;
  return { plan: planned };
}

function joinRefusal(window: LoadedChain, source: SessionOutline['source'], outline: SessionOutline, summary: PrefixSummary, bloom: UuidBloom | null): string {
  const { chain, loaded } = window;
  if (outline.read.sessionId !== summary.sessionId || loaded.conversation.sessionId !== summary.sessionId) return 'the window names another session';
  if (outline.read.diagnostics.some((d) => d.code === 'mixed_session_id')) return 'the window holds records of another session';
  if (chain.length === 0 || source.uuid(chain[0]!) !== summary.cutUuid) return 'the window chain does not reach the cut';
  if (loaded.conversation.compressedHistory !== null) return 'a compression in the window';
  const gaps = loaded.historyGaps;
  const endsAtCut =
    summary.cutParentUuid === null
      ? gaps.length === 0
      : gaps.length === 1 && gaps[0]!.childUuid === summary.cutUuid && gaps[0]!.missingParentUuid === summary.cutParentUuid && !gaps[0]!.beforeCheckpoint;
  if (!endsAtCut) return 'the window chain does not end at the cut';
  for (const d of loaded.diagnostics.slice(outline.read.diagnostics.length)) {
    if (d.code === 'parent_cycle' || (d.code === 'invalid_system_payload' && d.subtype === SystemSubtype.chatCompression))
      return 'a cycle or a compression in the window';
  }
  if (bloom !== null) {
    for (let i = 0; i < source.count; i++) if (bloom.mayHave(source, i)) return 'a record of the window may reuse a uuid of the prefix';
  }
  // The prefix's walk stopped at each gap because its parent was nowhere in the log: a
  // window record with that uuid would carry the walk on (into a cycle, or further back).
  if (summary.historyGaps.length > 0) {
    const missing = new Set(summary.historyGaps.map((g) => g.missingParentUuid));
    for (let i = 0; i < source.count; i++) if (missing.has(source.uuid(i))) return 'a record of the window supplies a parent the prefix lacked';
  }
  return '';
}

/** The chain of a load and where its lines lie in the log. */
export interface ChainView {
  window: LoadedChain;
  source: SessionOutline['source'];
  cwd(i: number): string | undefined;
  /** Added to the source's line numbers for the log's. */
  lineShift: number;
  /** The cwd before this view's first record (a previous summary's), or null. */
  cwdBefore: string | null;
  /** The records and listing head before this view's first record (a previous summary's), or null. */
  headBefore: { records: number; head: PrefixSummary['head'] } | null;
}

/** The view of a window read after a summary: its lines shifted past the prefix, the prefix's cwd and head before it. */
export function windowView(window: LoadedChain, outline: SessionOutline, summary: PrefixSummary): ChainView {
  return {
    window,
    source: outline.source,
    cwd: (i) => outline.cwd(i),
    lineShift: summary.linesBefore,
    cwdBefore: summary.cwd,
    headBefore: { records: summary.records, head: summary.head },
  };
}

/**
 * Whether the repaired history surely keeps this model record's entry: a part that is
 * sent whatever else the entry holds (a call with an id, or content that is neither a
 * thought nor empty). An entry the repair empties (calls without ids only, thoughts
 * only) vanishes, and the user entries on both sides of it become one: a cut there
 * would split that entry between prefix and window.
 */
function surelyKept(record: ChatRecord): boolean {
  const parts = record.type === 'assistant' ? record.message.parts : [];
  return parts.some((part) => {
    if (part.functionResponse !== undefined) return false;
    if (part.functionCall !== undefined) return typeof part.functionCall.id === 'string' && part.functionCall.id !== '';
    return !isThoughtPart(part) && !isEmptyPart(part);
  });
}

/**
 * Where the next summary cuts the log: before the last model entry of the chain that the
 * repaired history surely keeps (its first record); null when there is none.
 */
export function cutOf(view: ChainView): { k: number; line: number } | null {
  const { chain } = view.window;
  const source = view.source;
  for (let last = chain.length - 1; last >= 0; last--) {
    if (!source.isModel(chain[last]!)) continue;
    // Model records in a row are one history entry (their calls answered, or left dangling,
    // together): the cut goes before the first of them, never between.
    let k = last;
    while (k > 0 && source.isModel(chain[k - 1]!)) k--;
    const run = source.full(Array.from(chain.subarray(k, last + 1)));
    if (run.some(surelyKept)) return { k, line: source.firstLine(chain[k]!) + view.lineShift };
    last = k;
  }
  return null;
}

/** What summarize needs of the log beyond the view: the window's bytes and how it plans. */
export interface SummarizeInput {
  /** The whole log's plan (the one the summary must reproduce) and its listing facts. */
  whole: OutlinePlan;
  wholeFacts: LogFacts;
  /** How many of whole.loaded.diagnostics the reader gave (they come first). */
  wholeReadDiagnostics: number;
  view: ChainView;
  cut: { k: number; line: number };
  /** The window's outline (the log from the cut's line on) and its byte offset. */
  windowOutline: SessionOutline;
  windowStart: number;
  /** The prefix's uuids so far (a previous summary's), to be extended; null to start one. */
  bloom: UuidBloom | null;
  plan: PlanWindow;
  /** The window's plan on its own (no summary): what the window itself lists and counts. */
  planAlone: (outline: SessionOutline) => OutlinePlan;
}

/**
 * The summary of the log before the cut, by difference: the whole plan minus what the
 * window gives on its own; kept only when joining it to the window gives the whole plan
 * back. Null when no summary reproduces it (the log is then always read whole).
 */
export function summarize(input: SummarizeInput): { summary: PrefixSummary; bloom: UuidBloom } | null {
  const { whole, view, cut, windowOutline } = input;
  const { chain } = view.window;
  const source = view.source;
  // Every chain record before the cut must lie before its line.
  for (let k = 0; k < cut.k; k++) if (source.lastLine(chain[k]!) + view.lineShift >= cut.line) return null;
  let cwd: string | null = null;
  for (let k = cut.k - 1; k >= 0 && cwd === null; k--) cwd = view.cwd(chain[k]!) ?? null;
  cwd ??= view.cwdBefore;

  const alone = input.planAlone(windowOutline);
  const aloneGaps = alone.loaded.historyGaps.filter((g) => !g.beforeCheckpoint).length;
  const ownRepairs = alone.plan.repairs.length - aloneGaps;
  const wholeGaps = whole.loaded.historyGaps.filter((g) => !g.beforeCheckpoint).length;
  const beforeRepairs = whole.plan.repairs.slice(wholeGaps, whole.plan.repairs.length - ownRepairs);
  const windowMarkers = alone.loaded.diagnostics.length - windowOutline.read.diagnostics.length;
  const wholeDiagnostics = whole.loaded.diagnostics;
  const conversation = whole.loaded.conversation;
  const summary: PrefixSummary = {
    sessionId: conversation.sessionId,
    windowStart: input.windowStart,
    linesBefore: cut.line - 1,
    cutUuid: source.uuid(chain[cut.k]!),
    cutParentUuid: source.parentUuid(chain[cut.k]!),
    records: conversation.totalRecords - alone.loaded.conversation.totalRecords,
    sidechainRecords: (conversation.sidechainRecords ?? 0) - (alone.loaded.conversation.sidechainRecords ?? 0),
    readDiagnostics: wholeDiagnostics.slice(0, input.wholeReadDiagnostics).filter((d) => !('line' in d) || d.line < cut.line),
    walkDiagnostics: wholeDiagnostics.slice(input.wholeReadDiagnostics, wholeDiagnostics.length - windowMarkers),
    historyGaps: whole.loaded.historyGaps,
    compressedHistory: conversation.compressedHistory,
    cwd,
    before: { repairs: beforeRepairs, entries: whole.plan.apiEntryCount - alone.plan.apiEntryCount },
    ...(conversation.origin !== undefined ? { origin: conversation.origin } : {}),
    head: headOf(view, cut.line),
  };
  if (summary.records < 0 || ownRepairs < 0 || beforeRepairs.length + wholeGaps + ownRepairs !== whole.plan.repairs.length) return null;

  // The prefix's uuids: every record that starts before the cut's line (one that goes on
  // past it is then in both, and the check below refuses the summary).
  let bloom: UuidBloom;
  if (input.bloom === null) bloom = UuidBloom.sized(2 * source.count);
  else {
    bloom = input.bloom.copy();
    if (bloom.count + source.count > bloom.capacity) return null;
  }
  for (let i = 0; i < source.count; i++) if (source.firstLine(i) + view.lineShift < cut.line) bloom.add(source, i);
  if (bloom.count !== summary.records) return null;

  // As it will be read back, then checked: joined to its window it gives the whole plan.
  const stored = JSON.parse(JSON.stringify(summary)) as PrefixSummary;
  const joined = planWindow(windowOutline, stored, bloom, input.plan);
  if (!('plan' in joined) || !isDeepStrictEqual(plain(joined.plan), plain(whole))) return null;
  if (!isDeepStrictEqual(factsOf(windowOutline, stored), input.wholeFacts)) return null;
  return { summary: stored, bloom };
}

/** The listing head of the records before the cut's line. */
function headOf(view: ChainView, line: number): PrefixSummary['head'] {
  const source = view.source;
  const before = view.headBefore;
  let started = before !== null && before.records > 0 ? before.head.started : null;
  let firstUser = before?.head.firstUser ?? null;
  let seen = before !== null && before.records > 0;
  for (let i = 0; i < source.count && (!seen || firstUser === null); i++) {
    if (source.firstLine(i) + view.lineShift >= line) continue;
    if (!seen) {
      started = source.full([i])[0]!.timestamp ?? null;
      seen = true;
    }
    if (firstUser === null && source.type(i) === 'user') firstUser = { text: promptOf(source.full([i])[0]!) };
  }
  return { started, firstUser };
}

function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
