/**
 * The headless command (-p / --continue / --resume, text|json|stream-json out):
 * a thin adapter. It opens the session through the runtime, prints `init` and
 * the recovery line, does what the flags ask (inspect, continue, or a prompt)
 * and ends with exactly one `result`.
 */
import { errorCodeOf, errorMessageOf } from '../../errors.js';
import type { TurnOutcome } from '../../engine/engine-events.js';
import type { HostEnv } from '../../runtime/host-env.js';
import type { SessionRuntime } from '../../runtime/session-runtime.js';
import { WireEventMapper, errorFields, outcomeFields, resultMessage, successFields } from '../shared/wire-messages.js';
import { exitCodeForOutcome, exitCodeForError } from '../shared/exit-status.js';
import { stdoutBackpressure } from '../shared/backpressure.js';
import { errorExtras } from '../shared/error-result.js';
import { createOutputSink } from '../shared/output-sink.js';
import type { StdioRunOptions } from '../shared/run-options.js';
import { startStdioRun } from '../shared/start-stdio-run.js';

export async function runHeadless(o: StdioRunOptions, host: HostEnv): Promise<number> {
  const { clock, newId } = host.runtime;
  const started = clock();
  const out = createOutputSink(o.outputFormat, host.stdout, host.stderr, o.debug, { verbose: o.verbose });
  let sessionIdForErrors = o.sessionId ?? '';
  const fail = (code: string, message: string, error?: unknown): number => {
    out.result(resultMessage(sessionIdForErrors, newId, errorFields(code, message, clock() - started, errorExtras(error, sessionIdForErrors))));
    return exitCodeForError(code);
  };

  let runtime: SessionRuntime | undefined;
  try {
    const run = await startStdioRun(o, host, out, (id) => (sessionIdForErrors = id));
    runtime = run.runtime;
    const { decision } = run;
    if (decision.action === 'refused') return fail(decision.code, decision.message);
    if (decision.execute === 'nothing') {
      const message = 'message' in decision && decision.message ? decision.message : 'session inspected';
      out.result(resultMessage(runtime.sessionId, newId, successFields(message, clock() - started)));
      return 0;
    }

    const mapper = new WireEventMapper(runtime.sessionId, newId, o.includePartialMessages);
    runtime.subscribe((event) => {
      for (const message of mapper.map(event)) out.emit(message);
      // Text mode shows only the answer: a refused call would otherwise pass unseen (the message names the flag that allows it).
      if (event.type === 'tool_call_finished' && event.status === 'denied') out.notice(`refused ${event.call.name} (${event.call.id}): ${event.output}`);
    });
    runtime.setBackpressure(stdoutBackpressure(host.stdout, host.signal));
    // A signal stops the running turn through the runtime's stop signal (host.runtime.signal).
    let outcome: TurnOutcome;
    if (decision.execute === 'continuation') {
      const answer = await runtime.continueLastTurn({ planId: o.planId, auto: run.intent.type === 'auto_continue' });
      if (!answer.accepted) return fail(answer.code, answer.message);
      outcome = await answer.outcome;
    } else {
      outcome = await runtime.prompt([{ text: run.prompt ?? '' }]);
    }
    out.result(resultMessage(runtime.sessionId, newId, outcomeFields(outcome, host.modelName(runtime.settings.model))));
    return exitCodeForOutcome(outcome);
  } catch (error) {
    return fail(errorCodeOf(error), errorMessageOf(error), error);
  } finally {
    await runtime?.close();
  }
}
