/**
 * The synthetic result that closes a tool call whose outcome was never recorded.
 *
 * Peers say "retry if needed", and users report resumed agents re-running
 * side-effecting commands. Ours says the outcome is unknown and must be checked.
 */
import type { Part } from '../session/records.js';
import { parseMcpToolName } from '../wire/mcp-names.js';

export const SYNTHETIC_RESULT_REASON =
  'Tool execution result was not recorded: the process stopped (crash, abort or lost connection) ' +
  'before this call finished or before its result was saved. The outcome is unknown: the tool may ' +
  'have run completely, partly or not at all. Do not retry blindly; check the current state ' +
  '(files, processes, external systems) before deciding whether to run it again.';

/**
 * An MCP call went to a system outside mend (the server, and whatever it reaches): the answer
 * names the server, so the model checks there before calling again. Recovery never re-sends it.
 */
export function syntheticReasonFor(name: string): string {
  const mcp = parseMcpToolName(name);
  if (!mcp) return SYNTHETIC_RESULT_REASON;
  return (
    `${SYNTHETIC_RESULT_REASON} This was a call to the tool "${mcp.tool}" of the MCP server "${mcp.server}": ` +
    `the request may have reached the server and taken effect there. Verify with that server (a read-only query) before retrying; ` +
    `mend did not and will not send it again.`
  );
}

/** Whether a recorded error is a synthetic "outcome unknown" answer (for any tool). */
export function isSyntheticReason(text: unknown): boolean {
  return typeof text === 'string' && text.startsWith(SYNTHETIC_RESULT_REASON);
}

export function syntheticResultPart(callId: string, name: string): Part {
  return { functionResponse: { id: callId, name, response: { error: syntheticReasonFor(name) } } };
}
