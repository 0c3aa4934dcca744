/**
 * The synthetic result that closes a tool call whose outcome was never recorded.
 *
 * Peers say "retry if needed", and users report resumed agents re-running
 * side-effecting commands. Ours says the outcome is unknown and must be checked.
 */
import type { Part } from '../session/records.js';

export const SYNTHETIC_RESULT_REASON =
  'Tool execution result was not recorded: the process stopped (crash, abort or lost connection) ' +
  'before this call finished or before its result was saved. The outcome is unknown: the tool may ' +
  'have run completely, partly or not at all. Do not retry blindly; check the current state ' +
  '(files, processes, external systems) before deciding whether to run it again.';

export function syntheticResultPart(callId: string, name: string): Part {
  return { functionResponse: { id: callId, name, response: { error: SYNTHETIC_RESULT_REASON } } };
}
