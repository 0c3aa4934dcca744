/**
 * Another agent's session format behind one interface. An adapter recognises its
 * format from the bytes (never the file name) and translates a session into mend's
 * in-memory records, keeping the owner's ids (uuids, call ids) and tool names, so the
 * plan speaks in them. Everything after that (the loader, the planner, the policy)
 * is the one every mend session goes through.
 *
 * Reading never throws on data: torn, NUL-filled or invalid lines and row types the
 * adapter does not know come back as diagnostics.
 */
import type { LoadDiagnostic } from '../session/conversation.js';
import type { ChatRecord } from '../session/records.js';

export const FOREIGN_AGENTS = ['claude', 'codex', 'gemini'] as const;
export type ForeignAgent = (typeof FOREIGN_AGENTS)[number];

/** Where a translated record came from: what a writer in the owner's format needs to find the rows again. */
export interface ForeignRowSource {
  /** 1-based lines of the source file the record was built from (one row, or the rows of one merged message). */
  lines: number[];
}

export interface ForeignSession {
  agent: ForeignAgent;
  /** The owner's version as it wrote it (Claude's `version`, Codex's `cli_version`); null when the format keeps none (Gemini). */
  agentVersion: string | null;
  /** The owner's session id. */
  sessionId: string | null;
  /** The directory the session ran in, when the format says. */
  cwd: string | null;
  /** mend records in the order the loader reads them, with the owner's ids. */
  records: ChatRecord[];
  /** For each record (same index): the source rows. */
  rowsBySource: ForeignRowSource[];
  /** Damaged lines, unknown rows and the like; never fatal. */
  diagnostics: LoadDiagnostic[];
  /** Rows by their type in the owner's format, known or not (what the file holds). */
  rowTypes: Record<string, number>;
  /** Lines in the file, counting a last line without '\n'. */
  lines: number;
  bytes: number;
  endsWithNewline: boolean;
}

export interface ForeignAdapter {
  readonly agent: ForeignAgent;
  /** Whether the head of a file (its first few KiB) is in this format. From content, not the name. */
  sniff(head: Buffer): boolean;
  /** The whole file, translated. Never throws on data. */
  read(bytes: Buffer): ForeignSession;
}

/**
 * How much of a file `sniff` gets. Gemini's legacy whole-file JSON names its
 * `projectHash` and `messages` near the top; line formats need one complete line.
 */
export const SNIFF_BYTES = 64 * 1024;
