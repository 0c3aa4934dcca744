/** Turn outcomes and error codes to the process exit code (the one table is src/wire/exit-codes.ts's). */
import type { TurnOutcome } from '../../engine/engine-events.js';
import { ExitCode, exitCodeFor, exitCodeForAbort } from '../../wire/exit-codes.js';

export function exitCodeForOutcome(outcome: TurnOutcome): number {
  if (outcome.status === 'aborted') return exitCodeForAbort(outcome.abortReason);
  if (outcome.status === 'success') return ExitCode.success;
  return exitCodeFor(outcome.error?.code ?? 'internal');
}

export function exitCodeForError(code: string): number {
  return exitCodeFor(code);
}
