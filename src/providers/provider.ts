/**
 * The seam between the engine and a model backend. A provider turns a request into a
 * stream of small events; the engine shows them as they arrive and, at the end, turns
 * the same events into the model `Part[]` it records (see ResponseAccumulator).
 */
import { randomUUID } from 'node:crypto';
import type { Content, Part } from '../session/records.js';

export interface ToolDeclaration {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  history: Content[];
  tools: ToolDeclaration[];
  signal?: AbortSignal;
  systemPrompt?: string;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'other';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export type ProviderEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'thought_delta'; text: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; argsDelta: string }
  | { type: 'finish'; stopReason: StopReason; usage: Usage };

export interface ModelProvider {
  readonly name: string;
  readonly model: string;
  stream(req: ModelRequest): AsyncIterable<ProviderEvent>;
}

/** Something odd in a response. Reported as a value so one bad tool call does not lose the turn. */
export type ResponseProblem =
  | { code: 'invalid_tool_args'; index: number; id: string; name: string; raw: string; reason: string }
  | { code: 'tool_call_without_name'; index: number; id: string }
  | { code: 'tool_call_without_id'; index: number; name: string; assignedId: string }
  | { code: 'delta_without_start'; index: number }
  | { code: 'duplicate_start'; index: number }
  | { code: 'missing_finish' };

export interface CollectedResponse {
  /** The model entry's parts: thought, then text, then function calls in index order. */
  parts: Part[];
  stopReason: StopReason;
  usage: Usage;
  /** False when the stream ended without a `finish` event (e.g. cut off mid-response). */
  finished: boolean;
  problems: ResponseProblem[];
}

interface PendingCall {
  index: number;
  id: string;
  name: string;
  /** Argument text, kept only up to MAX_TOOL_ARGS_BYTES (+1 char, to know it went over). */
  args: string;
  /** Every argument byte that arrived, kept or not. */
  argsBytes: number;
}

/**
 * One call's argument text is capped: past it the call is treated like invalid arguments,
 * so a 30 MB argument neither fills memory nor becomes a 30 MB log line.
 */
export const MAX_TOOL_ARGS_BYTES = 1024 * 1024;
/** How much of an oversized argument text is kept on the call part, for the log and the model. */
export const OVERSIZED_ARGS_PREFIX_CHARS = 2048;
/**
 * Calls the engine should run from one response; the rest get an error result. Exported
 * for the engine, which owns running calls (the accumulator records them all).
 */
export const MAX_CALLS_PER_RESPONSE = 128;

/** What a call part carries when its arguments could not be used (see invalidArgsOf). */
export interface InvalidArgs {
  /** The raw argument text (a prefix of it when it was over MAX_TOOL_ARGS_BYTES). */
  raw: string;
  reason: string;
}

/**
 * The invalid-arguments record of a function call part: the accumulator stores the raw text
 * as `rawArgs` and the reason as `argsError` next to `args: {}` (the record schema is loose,
 * so both persist in the log), so the engine can answer the call with an error instead of
 * running it with `{}`.
 */
export function invalidArgsOf(part: Part): InvalidArgs | undefined {
  const call = part.functionCall as (Record<string, unknown> & { rawArgs?: unknown; argsError?: unknown }) | undefined;
  if (!call || typeof call.argsError !== 'string') return undefined;
  return { raw: typeof call.rawArgs === 'string' ? call.rawArgs : '', reason: call.argsError };
}

/**
 * Folds ProviderEvents into the final model parts. Pure and incremental: the engine can
 * push events while it streams them out and call `result()` at any point, including
 * after an abort, to record what arrived so far.
 */
export class ResponseAccumulator {
  private text = '';
  private thought = '';
  private readonly calls = new Map<number, PendingCall>();
  private readonly problems: ResponseProblem[] = [];
  private finishEvent: Extract<ProviderEvent, { type: 'finish' }> | undefined;

  push(event: ProviderEvent): void {
    switch (event.type) {
      case 'text_delta':
        this.text += event.text;
        return;
      case 'thought_delta':
        this.thought += event.text;
        return;
      case 'tool_call_start': {
        const existing = this.calls.get(event.index);
        if (existing) {
          this.problems.push({ code: 'duplicate_start', index: event.index });
          return;
        }
        this.calls.set(event.index, { index: event.index, id: event.id, name: event.name, args: '', argsBytes: 0 });
        return;
      }
      case 'tool_call_delta': {
        const call = this.calls.get(event.index);
        if (!call) {
          this.problems.push({ code: 'delta_without_start', index: event.index });
          return;
        }
        call.argsBytes += Buffer.byteLength(event.argsDelta);
        // Characters are at most 4 bytes, so this keeps every byte up to the cap and then stops growing.
        if (call.args.length <= MAX_TOOL_ARGS_BYTES) call.args += event.argsDelta.slice(0, MAX_TOOL_ARGS_BYTES + 1 - call.args.length);
        return;
      }
      case 'finish':
        this.finishEvent = event;
        return;
    }
  }

  result(): CollectedResponse {
    const problems = [...this.problems];
    const parts: Part[] = [];
    if (this.thought) parts.push({ text: this.thought, thought: true });
    if (this.text) parts.push({ text: this.text });
    const ordered = [...this.calls.values()].sort((a, b) => a.index - b.index);
    for (const call of ordered) {
      if (!call.name) {
        // A call we cannot name cannot be executed or answered; recording it would poison the history.
        problems.push({ code: 'tool_call_without_name', index: call.index, id: call.id });
        continue;
      }
      let id = call.id;
      if (!id) {
        // Recovery pairs calls with results by id, so every recorded call needs one.
        id = `call_${randomUUID()}`;
        problems.push({ code: 'tool_call_without_id', index: call.index, name: call.name, assignedId: id });
      }
      const parsed = parseCallArgs(call);
      if (parsed.ok) {
        parts.push({ functionCall: { id, name: call.name, args: parsed.args } });
        continue;
      }
      problems.push({ code: 'invalid_tool_args', index: call.index, id, name: call.name, raw: parsed.raw, reason: parsed.reason });
      parts.push({ functionCall: { id, name: call.name, args: {}, rawArgs: parsed.raw, argsError: parsed.reason } });
    }
    if (!this.finishEvent) problems.push({ code: 'missing_finish' });
    return {
      parts,
      stopReason: this.finishEvent?.stopReason ?? 'other',
      usage: this.finishEvent ? { ...this.finishEvent.usage } : { inputTokens: 0, outputTokens: 0 },
      finished: this.finishEvent !== undefined,
      problems,
    };
  }
}

type ParsedArgs = { ok: true; args: Record<string, unknown> } | { ok: false; reason: string };

function parseCallArgs(call: PendingCall): { ok: true; args: Record<string, unknown> } | { ok: false; raw: string; reason: string } {
  if (call.argsBytes > MAX_TOOL_ARGS_BYTES) {
    return {
      ok: false,
      raw: call.args.slice(0, OVERSIZED_ARGS_PREFIX_CHARS),
      reason: `arguments are ${call.argsBytes} bytes, over the limit of ${MAX_TOOL_ARGS_BYTES} bytes; only the first ${OVERSIZED_ARGS_PREFIX_CHARS} characters were kept`,
    };
  }
  const parsed = parseArgs(call.args);
  return parsed.ok ? parsed : { ok: false, raw: call.args, reason: parsed.reason };
}

function parseArgs(raw: string): ParsedArgs {
  // Models send "" for a call without arguments; that is a valid empty object, not a problem.
  if (raw.trim() === '') return { ok: true, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'arguments are not a JSON object' };
  }
  return { ok: true, args: value as Record<string, unknown> };
}

/** Drains an event stream into the final response. Errors from the stream propagate. */
export async function collectResponse(events: AsyncIterable<ProviderEvent> | Iterable<ProviderEvent>): Promise<CollectedResponse> {
  const accumulator = new ResponseAccumulator();
  for await (const event of events) accumulator.push(event);
  return accumulator.result();
}
