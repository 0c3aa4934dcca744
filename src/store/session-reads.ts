/**
 * What a SessionStore's reads give (session-store.ts): store-neutral results. The
 * JSONL reader and the PostgreSQL store produce them; the runtime consumes them.
 * Types only, so the seam owns its vocabulary and no reader owns the seam.
 */
import type { LoadDiagnostic, ReadRecord, SessionOrigin } from '../session/conversation.js';

export interface ReadResult {
  /** Valid records in file order, fragments merged into the first one's position. */
  records: ReadRecord[];
  diagnostics: LoadDiagnostic[];
  /** The session's id (the file name's, else the records' majority), or null when no record is valid. */
  sessionId: string | null;
  /** Size of the file in bytes. */
  bytes: number;
  /** Whether the last byte is '\n' (false for an empty file). */
  endsWithNewline: boolean;
  /** Number of lines, counting a final line without '\n'. */
  lines: number;
  /** Set when the file is another agent's session, read in place (src/foreign). */
  origin?: SessionOrigin;
}
