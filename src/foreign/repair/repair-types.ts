/**
 * What `mend repair` hands a writer of another agent's format, and what the writer gives
 * back. A writer is pure: it serialises what the plan decided (the dangling calls it
 * answers with mend's synthetic result) into the owner's format, keeps every other row the
 * reader could read as written, and leaves out the lines the reader found damaged.
 */
import type { SessionRecoveryPlan } from '../../recovery/plan-types.js';
import type { ForeignAgent, ForeignSession } from '../adapter.js';

export interface OwnerRepairInput {
  /** The source file: its absolute path and the bytes the session was read from. */
  source: { path: string; bytes: Buffer };
  /** The reader's translation of exactly those bytes. */
  session: ForeignSession;
  /** The one planner's plan over that translation. */
  plan: SessionRecoveryPlan;
  /** The id of the session to write (a fresh UUID). */
  newSessionId: string;
  /** ISO time stamped on the rows mend adds. */
  now: string;
  /** A fresh id for each row mend adds, where the format gives rows ids. */
  newRowId: () => string;
}

/** One thing the repair did, reported as it happened (line numbers are the source's, 1-based). */
export type OwnerRepairAction =
  /** A dangling call answered once with mend's "outcome unknown" result. */
  | { type: 'synthesized_tool_result'; callId: string; name: string }
  /** A line the reader could not use (torn, NUL-filled, not JSON, not an object): left out. */
  | { type: 'dropped_damaged_line'; line: number; code: string; bytes?: number }
  /** NUL bytes inside a line that was otherwise whole: the line kept without them. */
  | { type: 'removed_nul_bytes'; line: number; bytes: number }
  /** A repair the plan made that the owner's format has no way to say: the rows stay as written. */
  | { type: 'not_applied'; repair: SessionRecoveryPlan['repairs'][number]; reason: string };

export interface ResumeCommand {
  /** The directory the command must run in (null when any will do). */
  cwd: string | null;
  argv: string[];
}

export interface OwnerRepair {
  agent: ForeignAgent;
  /** Absolute path of the new session file (beside the source, named as the owner names it). */
  path: string;
  /** The whole new file. */
  text: string;
  sessionId: string;
  resume: ResumeCommand;
  repairs: OwnerRepairAction[];
}

export type OwnerRepairWriter = (input: OwnerRepairInput) => OwnerRepair;
