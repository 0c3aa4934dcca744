/**
 * The foreign readers' JSONL files as lines (cut by the one line splitter,
 * wire/line-splitter.ts, the session reader uses) parsed into objects, with the damage a crash or a power loss leaves reported as the same
 * diagnostics mend's own reader gives (torn_tail, malformed_line, invalid_record),
 * plus runs of NUL bytes (a file extended by a power loss before its data was
 * written) as `nul_bytes`.
 */
import type { LoadDiagnostic } from '../session/conversation.js';
import { LineSplitter, isBlank, lineText } from '../wire/line-splitter.js';

export interface ForeignLine {
  /** 1-based. */
  line: number;
  value: Record<string, unknown>;
}

export interface ScannedLines {
  rows: ForeignLine[];
  diagnostics: LoadDiagnostic[];
  lines: number;
  bytes: number;
  endsWithNewline: boolean;
}

const NUL = 0x00;

export function scanJsonLines(bytes: Buffer): ScannedLines {
  const rows: ForeignLine[] = [];
  const diagnostics: LoadDiagnostic[] = [];
  const end = LineSplitter.each(bytes, (view) => handle(view.bytes.subarray(view.start, view.end), view.number, !view.terminated, rows, diagnostics));
  return { rows, diagnostics, lines: end.lines, bytes: bytes.length, endsWithNewline: end.lastByte === 0x0a };
}

function handle(raw: Buffer, line: number, last: boolean, rows: ForeignLine[], diagnostics: LoadDiagnostic[]): void {
  let nuls = 0;
  if (raw.includes(NUL)) for (const b of raw) if (b === NUL) nuls++;
  const cleaned = nuls === 0 ? raw : Buffer.from(raw.filter((b) => b !== NUL));
  if (nuls > 0) diagnostics.push({ code: 'nul_bytes', line, bytes: nuls });
  const text = lineText(cleaned.toString('utf8'), line);
  if (isBlank(text)) return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    diagnostics.push(last ? { code: 'torn_tail', line, bytes: raw.length } : { code: 'malformed_line', line });
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    diagnostics.push({ code: 'invalid_record', line, reason: 'not a JSON object' });
    return;
  }
  rows.push({ line, value: value as Record<string, unknown> });
}

/** The first complete lines of a head, parsed (those that parse as objects). */
export function headObjects(head: Buffer, max = 20): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  LineSplitter.each(head, (view) => {
    const slice = view.bytes.toString('utf8', view.start, view.end).replace(/^\uFEFF/, '');
    try {
      const value: unknown = JSON.parse(slice);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) out.push(value as Record<string, unknown>);
    } catch {
      // a torn or damaged line: the next one may still tell
    }
    return out.length < max;
  });
  return out;
}

/** Counts a row type. */
export function countRow(counts: Record<string, number>, type: string): void {
  counts[type] = (counts[type] ?? 0) + 1;
}
