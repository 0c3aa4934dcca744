/**
 * The source file's lines as a writer copies them: the text of every line the reader
 * could read (as written, less any NUL bytes, a trailing CR or a leading BOM), and the
 * damaged lines left out. Splits with the readers' own splitter and scanner (foreign-lines.ts), so a
 * writer and the reader agree on which lines are damaged.
 */
import { scanJsonLines } from '../foreign-lines.js';
import { LineSplitter, lineText } from '../../wire/line-splitter.js';
import type { OwnerRepairAction } from './repair-types.js';

export interface SourceLine {
  /** 1-based line in the source. */
  line: number;
  text: string;
  value: Record<string, unknown>;
}

export interface SourceLines {
  /** The readable lines in file order. */
  kept: SourceLine[];
  /** What was left out or cleaned, in line order. */
  actions: OwnerRepairAction[];
}

const DAMAGE = new Set(['torn_tail', 'malformed_line', 'invalid_record']);

function rawLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  LineSplitter.each(bytes, (view) => void out.push(view.bytes.subarray(view.start, view.end)));
  return out;
}

function cleanText(raw: Buffer, line: number): string {
  return lineText((raw.includes(0) ? Buffer.from(raw.filter((b) => b !== 0)) : raw).toString('utf8'), line);
}

export function sourceLines(bytes: Buffer): SourceLines {
  const scanned = scanJsonLines(bytes);
  const raws = rawLines(bytes);
  const kept: SourceLine[] = scanned.rows.map((row) => ({ line: row.line, text: cleanText(raws[row.line - 1]!, row.line), value: row.value }));
  const keptLines = new Set(kept.map((k) => k.line));
  const actions: OwnerRepairAction[] = [];
  for (const d of scanned.diagnostics) {
    if (!('line' in d)) continue;
    if (DAMAGE.has(d.code)) {
      actions.push({ type: 'dropped_damaged_line', line: d.line, code: d.code, ...('bytes' in d ? { bytes: d.bytes } : {}) });
    } else if (d.code === 'nul_bytes') {
      actions.push(
        keptLines.has(d.line)
          ? { type: 'removed_nul_bytes', line: d.line, bytes: d.bytes }
          : { type: 'dropped_damaged_line', line: d.line, code: 'nul_bytes', bytes: d.bytes },
      );
    }
  }
  // A line that was all NULs reports both nul_bytes and nothing else: one action per line.
  const seen = new Set<string>();
  const unique = actions.filter((a) => {
    const key = a.type === 'dropped_damaged_line' ? `drop:${a.line}` : JSON.stringify(a);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  unique.sort((a, b) => ('line' in a && 'line' in b ? a.line - b.line : 0));
  return { kept, actions: unique };
}

/** Joins lines into a JSONL file (every line ends with a newline). */
export function joinLines(texts: string[]): string {
  return texts.length === 0 ? '' : `${texts.join('\n')}\n`;
}

/** Every occurrence of one id in a row's text replaced by another (ids are UUIDs: no accidental matches). */
export function replaceId(text: string, from: string | null, to: string): string {
  return from === null || from === '' ? text : text.split(from).join(to);
}
