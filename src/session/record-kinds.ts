/**
 * What kind of record a record is, as plain values and predicates (no zod): shared by
 * records.ts and the loader, and all the outline pass's worker thread needs of them, so
 * that the worker starts without loading zod (zod was most of its start-up).
 * It imports nothing (records.ts re-exports it: a type import back would be a cycle).
 */

/** System subtypes that mend itself writes or interprets. */
export const SystemSubtype = {
  chatCompression: 'chat_compression',
  turnAborted: 'turn_aborted',
  turnFailed: 'turn_failed',
  recovery: 'recovery',
  parentSession: 'parent_session',
} as const;

/** Records mend writes carry `version: "mend/<semver>"`, which is how `cause` tells our logs from others. */
export const MEND_VERSION_PREFIX = 'mend/';
export function isMendVersion(version: string | undefined): boolean {
  return typeof version === 'string' && version.startsWith(MEND_VERSION_PREFIX);
}

/**
 * A subagent's transcript record. Claude Code keeps subagent transcripts in the main
 * file marked `isSidechain: true`; Qwen Code 0.24.4 writes them to a file of their own
 * (`subagents/<sessionId>/agent-<agentId>.jsonl`) with the same marker plus `agentId`,
 * so such a record copied into a session file carries at least one of the two. An
 * explicit `isSidechain: false` is the main history whatever else it carries.
 */
export function isSidechainRecord(record: object): boolean {
  const marker = (record as { isSidechain?: unknown }).isSidechain;
  if (marker !== undefined) return marker === true;
  const agentId = (record as { agentId?: unknown }).agentId;
  return typeof agentId === 'string' && agentId.length > 0;
}
