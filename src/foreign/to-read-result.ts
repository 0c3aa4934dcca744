/**
 * A translated foreign session as what a store's `read` returns: its records go
 * through mend's own record validation and fragment merging (readRecordLines),
 * then the reader's diagnostics join those. The loader and the planner see nothing
 * else, so a foreign session is planned by the rules every mend session is.
 */
import { readRecordLines, type ReadResult } from '../session/log-reader.js';
import type { ForeignRead } from './registry.js';

export async function foreignReadResult(session: ForeignRead): Promise<ReadResult> {
  // Positions are the source lines where each record has its own later line (diagnostics and
  // records then speak of the same lines); else (upserts reorder rows) the translated order.
  const lines = session.rowsBySource.map((s) => s.lines[0] ?? 0);
  const inOrder = lines.every((line, i) => line > (i === 0 ? 0 : lines[i - 1]!));
  const rows = session.records.map((record, i) => ({ position: inOrder ? lines[i]! : i + 1, text: JSON.stringify(record) }));
  const read = await readRecordLines(rows, session.sessionId ? { fileSessionId: session.sessionId } : {});
  return {
    ...read,
    diagnostics: [...session.diagnostics, ...read.diagnostics],
    bytes: session.bytes,
    endsWithNewline: session.endsWithNewline,
    lines: session.lines,
  };
}
