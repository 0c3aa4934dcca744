/**
 * The agent loop over one open session: stream a model response, record it
 * (durable before any tool starts), run the requested tools, record each result
 * (durable before the next request), repeat until the model stops.
 *
 * It also executes recovery continuations. The plan's apiHistory is sent as it is;
 * only the synthetic results that close the interrupted turn are written, marked
 * with the plan id, and a trailing user prompt is never written a second time.
 */
import type { SessionRecoveryPlan } from '../recovery/plan-types.js';
import { toRecoveryDebugPayload } from '../recovery/debug-payload.js';
import { validateProviderHistory } from '../recovery/validate-history.js';
import { MendError, errorCodeOf, errorMessageOf, isMendError } from '../errors.js';
import {
  MAX_CALLS_PER_RESPONSE,
  ResponseAccumulator,
  invalidArgsOf,
  type ModelProvider,
  type ProviderEvent,
  type ToolDeclaration,
} from '../providers/provider.js';
import { invalidArgsMessage } from '../tools/invalid-args.js';
import { turnAbortReasonOf, type ChatRecord, type Content, type Part, type TurnAbortReason } from '../session/records.js';
import type { EngineEvent, PermissionDenial, ToolCallInfo, ToolCallStatus, TurnOutcome } from './engine-events.js';
import { MAX_TEXT_PART_BYTES, capTextParts } from './record-caps.js';
import type { RecordBuilder } from './record-builder.js';

export interface RecordSink {
  append(record: ChatRecord, opts: { durable: boolean }): Promise<void>;
}

export type ToolCall = ToolCallInfo;

export interface ToolRunOutcome {
  output: string;
  isError: boolean;
  display?: string;
  /** Recorded in the result's response beside output/error (an MCP result's blocks); the model reads `output`. */
  details?: Record<string, unknown>;
}

export interface ToolPort {
  /** Resolves once the set of tools is current (a tool source that changes: MCP servers); awaited before each model request. */
  ready?(): Promise<void>;
  declarations(): ToolDeclaration[];
  run(call: ToolCall, signal: AbortSignal): Promise<ToolRunOutcome>;
}

/** `interrupt`: the host denied and asked to stop the whole turn (Claude's deny with interrupt). */
export type ApprovalDecision = { allow: true; args?: Record<string, unknown> } | { allow: false; message: string; interrupt?: boolean };
export type ApprovalGate = (call: ToolCall, signal: AbortSignal) => Promise<ApprovalDecision>;

export interface AgentSessionDeps {
  sessionId: string;
  history: Content[];
  builder: RecordBuilder;
  sink: RecordSink;
  /** Resolved lazily: settings are checked only when a model call is needed. */
  provider: () => Promise<ModelProvider>;
  tools: ToolPort;
  approve: ApprovalGate;
  /**
   * Resolves once the front end can take more output (stdout drained); the engine waits on
   * it between streamed events, so a host that stops reading cannot grow mend's memory.
   */
  backpressure?: () => Promise<void> | undefined;
  /** The system prompt of each model request (read per request: a host may change it). */
  systemPrompt?: () => string | undefined;
  emit: (event: EngineEvent) => void;
  /**
   * Proves the writer still holds the session, right before a side effect: every tool
   * start (built-in or MCP, all go through `tools.run` below) and acting on a permission
   * answer. Rejects with `session_lease_lost` when another writer took over: the tool
   * never runs and the turn ends with that error.
   */
  fence?: () => Promise<void>;
  newId: () => string;
  now: () => string;
  /** Milliseconds clock for durations. */
  clock: () => number;
}

export interface TurnOptions {
  signal: AbortSignal;
  maxTurns: number;
}

type Finish = (fields: Pick<TurnOutcome, 'status'> & Partial<TurnOutcome>) => TurnOutcome;

function abortReason(signal: AbortSignal): TurnAbortReason {
  return turnAbortReasonOf(signal.reason);
}

/** Store errors that end a turn as they are: writing a turn_failed record after them cannot work, or must not. */
const STOPPING_STORE_ERRORS: ReadonlySet<string> = new Set(['session_write_failed', 'session_lease_lost', 'store_unavailable']);

const ABORTED_TOOL_MESSAGE = 'Tool execution was aborted by the user before it finished. Its effects may be partial; check the state before running it again.';
const NOT_STARTED_MESSAGE = 'Tool was not started: the turn was aborted by the user before this call ran.';

export class AgentSession {
  history: Content[];

  constructor(private readonly deps: AgentSessionDeps) {
    this.history = deps.history;
  }

  private async write(record: ChatRecord, durable: boolean): Promise<void> {
    await this.deps.sink.append(record, { durable });
    this.deps.builder.advance(record);
  }

  /**
   * Records what closing the plan's interrupted turn needs: the debug payload, then
   * one tool_result per synthetic part (recorded results are not written again).
   * Afterwards the in-memory history is the plan's apiHistory.
   */
  async recordRecoveryStart(plan: SessionRecoveryPlan): Promise<void> {
    // A run that cannot reach a model must not leave records behind: check first.
    await this.deps.provider();
    const { builder } = this.deps;
    await this.write(builder.recovery(toRecoveryDebugPayload(plan, this.deps.now())), true);
    const synthetic = new Set(plan.continuation?.syntheticCallIds ?? []);
    const written: { uuids: string[]; parts: Part[] } = { uuids: [], parts: [] };
    for (const part of plan.continuation?.parts ?? []) {
      const response = part.functionResponse;
      if (!response || !synthetic.has(response.id ?? '')) continue;
      const record = builder.toolResult({ ...part, functionResponse: response }, 'error', { synthetic: { planId: plan.planId } });
      await this.write(record, true);
      written.uuids.push(record.uuid);
      written.parts.push(part);
    }
    if (written.parts.length > 0) this.deps.emit({ type: 'recovery_results', planId: plan.planId, ...written });
    this.history = structuredClone(plan.apiHistory);
  }

  async runContinuation(plan: SessionRecoveryPlan, opts: TurnOptions): Promise<TurnOutcome> {
    await this.recordRecoveryStart(plan);
    return this.loop(opts);
  }

  async runPrompt(prompt: Part[], opts: TurnOptions): Promise<TurnOutcome> {
    await this.deps.provider();
    const parts = capTextParts(prompt);
    const cut = parts.filter((p, i) => p !== prompt[i]).length;
    if (cut > 0) {
      this.deps.emit({
        type: 'warning',
        code: 'prompt_truncated',
        message: `${cut} part(s) of the prompt were over the ${MAX_TEXT_PART_BYTES}-byte record cap and were cut (the model sees a marker where)`,
      });
    }
    const record = this.deps.builder.user(parts);
    await this.write(record, true);
    this.deps.emit({ type: 'user_prompt', uuid: record.uuid, parts });
    this.history.push({ role: 'user', parts });
    return this.loop(opts);
  }

  private async loop(opts: TurnOptions): Promise<TurnOutcome> {
    const started = this.deps.clock();
    let apiMs = 0;
    let numTurns = 0;
    let lastText = '';
    const usage = { inputTokens: 0, outputTokens: 0 };
    const permissionDenials: PermissionDenial[] = [];
    const finish: Finish = (fields) => ({
      durationMs: Math.round(this.deps.clock() - started),
      apiDurationMs: Math.round(apiMs),
      numTurns,
      usage,
      permissionDenials,
      ...fields,
    });

    try {
      for (;;) {
        if (numTurns >= opts.maxTurns) {
          return await this.failed(finish, 'max_turns', { code: 'max_turns', message: `stopped after ${opts.maxTurns} model turns (--max-turns)` });
        }
        numTurns += 1;
        const check = validateProviderHistory(this.history);
        if (!check.ok) throw new MendError('invalid_history', `history is not provider-safe: ${check.problems.join('; ')}`);

        const provider = await this.deps.provider();
        await this.deps.tools.ready?.();
        const messageId = `msg_${this.deps.newId()}`;
        const acc = new ResponseAccumulator();
        const apiStart = this.deps.clock();
        let streamError: unknown;
        let started = false;
        try {
          const systemPrompt = this.deps.systemPrompt?.();
          const request = { history: this.history, tools: this.deps.tools.declarations(), signal: opts.signal, ...(systemPrompt ? { systemPrompt } : {}) };
          for await (const event of provider.stream(request)) {
            acc.push(event);
            if (!started) {
              started = true;
              this.deps.emit({ type: 'message_start', messageId, model: provider.model });
            }
            this.deps.emit(streamEvent(messageId, event));
            const wait = this.deps.backpressure?.();
            if (wait) await wait;
            if (opts.signal.aborted) break;
          }
        } catch (error) {
          streamError = error;
        }
        apiMs += this.deps.clock() - apiStart;

        const collected = acc.result();
        const response = { ...collected, parts: capTextParts(collected.parts) };
        usage.inputTokens += response.usage.inputTokens;
        usage.outputTokens += response.usage.outputTokens;

        if (opts.signal.aborted) {
          // Keep the partial text the user saw; calls from a cut-off response are not recorded
          // (their arguments may be incomplete and they never ran).
          const partial = response.parts.filter((p) => !p.functionCall);
          if (partial.length > 0) {
            const record = this.deps.builder.assistant(partial, provider.model, response.usage);
            await this.write(record, true);
            // Memory and log must agree: the next turn continues after this partial answer.
            this.history.push({ role: 'model', parts: partial });
            // And the host sees what was logged: the partial answer is a message like any other.
            this.deps.emit({
              type: 'assistant_message',
              uuid: record.uuid,
              messageId,
              model: provider.model,
              parts: partial,
              stopReason: 'aborted',
              usage: response.usage,
            });
          }
          return await this.aborted(opts.signal, finish);
        }
        if (streamError !== undefined) throw streamError;

        const record = this.deps.builder.assistant(response.parts, provider.model, response.usage);
        const calls = response.parts.filter((p) => p.functionCall).map((p) => p.functionCall!);
        if (response.parts.length > 0) {
          // Durable before any tool may start (a crash then leaves a dangling call, never a lost
          // one) and before it is shown: a final answer a client saw must survive a power cut.
          await this.write(record, true);
          this.history.push({ role: 'model', parts: response.parts });
        }
        this.deps.emit({
          type: 'assistant_message',
          uuid: record.uuid,
          messageId,
          model: provider.model,
          parts: response.parts,
          stopReason: calls.length > 0 ? 'tool_use' : response.stopReason,
          usage: response.usage,
        });
        const text = response.parts
          .filter((p) => typeof p.text === 'string' && !p.thought)
          .map((p) => p.text)
          .join('');
        if (text) lastText = text;
        if (calls.length === 0) return finish({ status: 'success', text: lastText });

        const results: Part[] = [];
        for (const [i, fc] of calls.entries()) {
          const call: ToolCall = { id: fc.id ?? '', name: fc.name, args: fc.args ?? {} };
          if (opts.signal.aborted) {
            // Known outcome: these never ran. Record that instead of leaving them dangling.
            for (const rest of calls.slice(i)) {
              results.push(
                await this.recordResult(
                  { id: rest.id ?? '', name: rest.name, args: rest.args ?? {} },
                  NOT_STARTED_MESSAGE,
                  true,
                  'cancelled',
                  undefined,
                  'not_started',
                ),
              );
            }
            break;
          }
          // Calls past the cap, and calls whose arguments were not JSON, never run: the model
          // reads why in their results and can try again.
          if (i >= MAX_CALLS_PER_RESPONSE) {
            const message = `Not run: a response may request at most ${MAX_CALLS_PER_RESPONSE} tool calls; this was call ${i + 1} of ${calls.length}. Request fewer at a time.`;
            results.push(await this.recordResult(call, message, true, 'error'));
            continue;
          }
          const invalid = invalidArgsOf({ functionCall: fc });
          if (invalid) {
            results.push(await this.recordResult(call, invalidArgsMessage(call.name, invalid), true, 'error'));
            continue;
          }
          const decision = await this.deps.approve(call, opts.signal);
          // The answer may come long after the question (another writer may own the session by now).
          await this.deps.fence?.();
          if (!decision.allow) {
            permissionDenials.push({ toolName: call.name, toolUseId: call.id, toolInput: call.args });
            results.push(await this.recordResult(call, decision.message, true, 'error', undefined, 'denied'));
            continue;
          }
          // A host may run the call with other arguments than the model's (updatedInput): what ran is recorded.
          const executedArgs = decision.args !== undefined && JSON.stringify(decision.args) !== JSON.stringify(call.args) ? decision.args : undefined;
          this.deps.emit({ type: 'tool_call_started', call: executedArgs ? { ...call, args: executedArgs } : call });
          const outcome = await this.deps.tools.run({ ...call, args: executedArgs ?? call.args }, opts.signal);
          if (opts.signal.aborted) {
            results.push(
              await this.recordResult(call, `${ABORTED_TOOL_MESSAGE}\n${outcome.output}`.trim(), true, 'cancelled', undefined, 'cancelled', executedArgs),
            );
            continue;
          }
          results.push(
            await this.recordResult(
              call,
              outcome.output,
              outcome.isError,
              outcome.isError ? 'error' : 'success',
              outcome.display,
              undefined,
              executedArgs,
              outcome.details,
            ),
          );
        }
        this.history.push({ role: 'user', parts: results });
        if (opts.signal.aborted) return await this.aborted(opts.signal, finish);
      }
    } catch (error) {
      if (opts.signal.aborted) return await this.aborted(opts.signal, finish);
      // Nothing more can be written (or must be, after a lost lease): the caller ends the turn with this error.
      if (isMendError(error) && STOPPING_STORE_ERRORS.has(error.code)) throw error;
      return await this.failed(finish, 'error', { code: errorCodeOf(error), message: errorMessageOf(error) });
    }
  }

  private async recordResult(
    call: ToolCall,
    output: string,
    isError: boolean,
    status: 'success' | 'error' | 'cancelled',
    display?: string,
    outcome: ToolCallStatus = status,
    executedArgs?: Record<string, unknown>,
    details?: Record<string, unknown>,
  ): Promise<Part> {
    const base = isError ? { error: output } : { output };
    const part: Part & { functionResponse: NonNullable<Part['functionResponse']> } = {
      functionResponse: { id: call.id, name: call.name, response: details ? { ...details, ...base } : base },
    };
    const record = this.deps.builder.toolResult(part, status, {
      ...(display !== undefined ? { display } : {}),
      ...(executedArgs !== undefined ? { executedArgs } : {}),
    });
    // Durable before the next model request.
    await this.write(record, true);
    this.deps.emit({
      type: 'tool_call_finished',
      uuid: record.uuid,
      call,
      status: outcome,
      isError,
      output,
      ...(display !== undefined ? { display } : {}),
      result: part,
    });
    return part;
  }

  /** Records the known error that ended the turn, so a later resume says `failed`, not `crash`. */
  private async failed(finish: Finish, status: 'error' | 'max_turns', error: { code: string; message: string }): Promise<TurnOutcome> {
    await this.write(this.deps.builder.turnFailed(error.code, error.message), true);
    return finish({ status, error });
  }

  private async aborted(signal: AbortSignal, finish: Finish): Promise<TurnOutcome> {
    const reason = abortReason(signal);
    await this.write(this.deps.builder.turnAborted(reason), true);
    return finish({ status: 'aborted', abortReason: reason, error: { code: 'aborted', message: `turn aborted (${reason})` } });
  }
}

function streamEvent(messageId: string, event: ProviderEvent): EngineEvent {
  switch (event.type) {
    case 'text_delta':
      return { type: 'text_delta', messageId, text: event.text };
    case 'thought_delta':
      return { type: 'thought_delta', messageId, text: event.text };
    case 'tool_call_start':
      return { type: 'tool_input_start', messageId, index: event.index, callId: event.id, name: event.name };
    case 'tool_call_delta':
      return { type: 'tool_input_delta', messageId, index: event.index, delta: event.argsDelta };
    case 'finish':
      return { type: 'message_end', messageId, stopReason: event.stopReason, usage: event.usage };
  }
}
