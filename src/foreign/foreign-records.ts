/**
 * The mend records a foreign reader makes, in one place: the base fields mend's
 * loader reads, the owner's version kept as `version` (so `cause` says the tail
 * was written by another CLI), and the system records that carry what another
 * agent wrote but a model never sees (`foreign_row`, `foreign_meta`).
 */
import type { ChatRecord, Part, SystemRecord } from '../session/records.js';
import type { ForeignAgent } from './adapter.js';

export const ForeignSubtype = {
  /** A row on the owner's chain that is no message (attachments, progress, bookkeeping): keeps the chain whole. */
  row: 'foreign_row',
  /** Something the owner wrote that is not the user's words nor the model's (meta rows, its own synthetic turns). */
  meta: 'foreign_meta',
} as const;

export interface Base {
  uuid: string;
  parentUuid: string | null;
  sessionId: string;
  timestamp: string;
  version: string;
  cwd?: string | undefined;
  isSidechain?: boolean | undefined;
}

function base(b: Base): Record<string, unknown> {
  const out: Record<string, unknown> = { uuid: b.uuid, parentUuid: b.parentUuid, sessionId: b.sessionId, timestamp: b.timestamp, version: b.version };
  if (b.cwd !== undefined) out['cwd'] = b.cwd;
  if (b.isSidechain !== undefined) out['isSidechain'] = b.isSidechain;
  return out;
}

export function userRecord(b: Base, parts: Part[]): ChatRecord {
  return { ...base(b), type: 'user', message: { role: 'user', parts } } as ChatRecord;
}

export function modelRecord(b: Base, parts: Part[], model?: string): ChatRecord {
  return { ...base(b), type: 'assistant', ...(model ? { model } : {}), message: { role: 'model', parts } } as ChatRecord;
}

export function resultRecord(b: Base, parts: Part[]): ChatRecord {
  return { ...base(b), type: 'tool_result', message: { role: 'user', parts } } as ChatRecord;
}

export function systemRecord(b: Base, subtype: string, systemPayload: unknown): SystemRecord {
  return { ...base(b), type: 'system', subtype, systemPayload } as SystemRecord;
}

/**
 * An earlier recovery attempt the owner made itself (Claude Code's "Continue from where
 * you left off."): a `recovery` record, which the plan counts as an earlier attempt.
 */
export function ownerRecoveryRecord(b: Base, agent: ForeignAgent, note: string): SystemRecord {
  return systemRecord(b, 'recovery', { planId: `${agent}_resume`, kind: 'unknown', repairs: [], agent, note });
}

/** A tool's output as the text of a function response (the owner's content blocks joined). */
export function responseOf(output: string, isError: boolean): Record<string, unknown> {
  return isError ? { error: output } : { output };
}
