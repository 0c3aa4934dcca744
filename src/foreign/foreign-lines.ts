/**
 * The one line splitter of the foreign readers: a JSONL file's lines as parsed
 * objects, with the damage a crash or a power loss leaves reported as the same
 * diagnostics mend's own reader gives (torn_tail, malformed_line, invalid_record),
 * plus runs of NUL bytes (a file extended by a power loss before its data was
 * written) as `nul_bytes`.
 */
import type { LoadDiagnostic } from '../session/conversation.js';

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

const NEWLINE = 0x0a;
const NUL = 0x00;

export function scanJsonLines(bytes: Buffer): ScannedLines {
  const rows: ForeignLine[] = [];
  const diagnostics: LoadDiagnostic[] = [];
  let line = 0;
  let start = 0;
  const endsWithNewline = bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE;
  while (start < bytes.length) {
    let end = bytes.indexOf(NEWLINE, start);
    const last = end === -1;
    if (last) end = bytes.length;
    line++;
    handle(bytes.subarray(start, end), line, last, rows, diagnostics);
    start = end + 1;
  }
  return { rows, diagnostics, lines: line, bytes: bytes.length, endsWithNewline };
}

function handle(raw: Buffer, line: number, last: boolean, rows: ForeignLine[], diagnostics: LoadDiagnostic[]): void {
  let nuls = 0;
  for (const b of raw) if (b === NUL) nuls++;
  const cleaned = nuls === 0 ? raw : Buffer.from(raw.filter((b) => b !== NUL));
  if (nuls > 0) diagnostics.push({ code: 'nul_bytes', line, bytes: nuls });
  let text = cleaned.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim().length === 0) return;
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
  let start = 0;
  while (out.length < max) {
    const end = head.indexOf(NEWLINE, start);
    const slice = head
      .subarray(start, end === -1 ? head.length : end)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
    try {
      const value: unknown = JSON.parse(slice);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) out.push(value as Record<string, unknown>);
    } catch {
      // a torn or damaged line: the next one may still tell
    }
    if (end === -1) break;
    start = end + 1;
  }
  return out;
}

/** Counts a row type. */
export function countRow(counts: Record<string, number>, type: string): void {
  counts[type] = (counts[type] ?? 0) + 1;
}
