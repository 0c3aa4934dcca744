/**
 * Turns chat-completions stream chunks into ProviderEvents. OpenAI-compatible servers
 * differ in small ways (missing indexes, reasoning fields, usage on every chunk), so
 * every field is parsed on its own and a malformed field is dropped instead of failing
 * the whole response.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ProviderEvent, StopReason, Usage } from './provider.js';

/** `.catch(undefined)` on every field: one odd field must not cost the rest of the chunk. */
const optionalString = z.string().nullish().catch(undefined);

const ToolCallDeltaSchema = z.looseObject({
  index: z.number().int().nonnegative().nullish().catch(undefined),
  id: optionalString,
  function: z.looseObject({ name: optionalString, arguments: optionalString }).nullish().catch(undefined),
});

const DeltaSchema = z.looseObject({
  content: optionalString,
  // DeepSeek, vLLM and DashScope stream reasoning under one of these names.
  reasoning_content: optionalString,
  reasoning: optionalString,
  tool_calls: z.array(ToolCallDeltaSchema).nullish().catch(undefined),
});

const ChoiceSchema = z.looseObject({
  index: z.number().nullish().catch(undefined),
  delta: DeltaSchema.nullish().catch(undefined),
  finish_reason: optionalString,
});

const tokenCount = z.number().nonnegative().catch(0);
const UsageSchema = z.looseObject({ prompt_tokens: tokenCount, completion_tokens: tokenCount });

export const ChatChunkSchema = z.looseObject({
  choices: z.array(ChoiceSchema).catch([]),
  usage: UsageSchema.nullish().catch(undefined),
});

interface CallState {
  id: string | undefined;
  name: string | undefined;
  started: boolean;
  /** Argument text that arrived before the call's name; flushed once it is started. */
  pendingArgs: string;
}

export function mapFinishReason(reason: string | undefined, sawToolCalls: boolean): StopReason {
  switch (reason) {
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'stop':
      // Some compatible servers say "stop" after emitting tool calls; the calls are what matter.
      return sawToolCalls ? 'tool_use' : 'end_turn';
    // No reason given (a stream cut short, or a server that omits it), or one this table does not know.
    case undefined:
    default:
      return sawToolCalls ? 'tool_use' : 'other';
  }
}

/** Stateful per response: tool calls are assembled across chunks by index. */
export class ChatChunkMapper {
  private readonly calls = new Map<number, CallState>();
  private lastIndex = -1;
  private finishReason: string | undefined;
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };
  /** Chunks that were not even an object; counted, not fatal. */
  ignoredChunks = 0;

  map(raw: unknown): ProviderEvent[] {
    const parsed = ChatChunkSchema.safeParse(raw);
    if (!parsed.success) {
      this.ignoredChunks += 1;
      return [];
    }
    const chunk = parsed.data;
    // Servers that report usage on every chunk send running totals; the last one wins.
    if (chunk.usage) {
      this.usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    }
    const events: ProviderEvent[] = [];
    // mend never asks for n > 1, so only the first choice matters.
    const choice = chunk.choices.find((c) => (c.index ?? 0) === 0);
    if (!choice) return events;
    const delta = choice.delta;
    const reasoning = delta?.reasoning_content ?? delta?.reasoning;
    if (reasoning) events.push({ type: 'thought_delta', text: reasoning });
    if (delta?.content) events.push({ type: 'text_delta', text: delta.content });
    for (const toolDelta of delta?.tool_calls ?? []) {
      events.push(...this.mapToolDelta(toolDelta));
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return events;
  }

  /** False until some chunk carried a finish_reason; a stream cut off early never gets one. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /** Call once the stream has ended: flushes unnamed calls and emits `finish`. */
  end(): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    for (const [index, call] of this.calls) {
      // Never named: start it anyway so the accumulator reports it instead of it vanishing.
      if (!call.started) events.push(...this.start(index, call, ''));
    }
    events.push({
      type: 'finish',
      stopReason: mapFinishReason(this.finishReason, this.calls.size > 0),
      usage: { ...this.usage },
    });
    return events;
  }

  private mapToolDelta(toolDelta: z.infer<typeof ToolCallDeltaSchema>): ProviderEvent[] {
    const index = this.resolveIndex(toolDelta.index ?? undefined, toolDelta.id ?? undefined);
    let call = this.calls.get(index);
    if (!call) {
      call = { id: undefined, name: undefined, started: false, pendingArgs: '' };
      this.calls.set(index, call);
    }
    this.lastIndex = index;
    // The first id and name win: later chunks may repeat them, never correct them.
    call.id ??= toolDelta.id || undefined;
    call.name ??= toolDelta.function?.name || undefined;
    const args = toolDelta.function?.arguments ?? '';
    if (!call.started) {
      call.pendingArgs += args;
      return call.name ? this.start(index, call, call.name) : [];
    }
    return args ? [{ type: 'tool_call_delta', index, argsDelta: args }] : [];
  }

  private start(index: number, call: CallState, name: string): ProviderEvent[] {
    call.started = true;
    // Recovery pairs calls and results by id, so a server that omits ids gets one from us.
    call.id ??= `call_${randomUUID()}`;
    const events: ProviderEvent[] = [{ type: 'tool_call_start', index, id: call.id, name }];
    if (call.pendingArgs) events.push({ type: 'tool_call_delta', index, argsDelta: call.pendingArgs });
    call.pendingArgs = '';
    return events;
  }

  /** Some servers omit `index`; a new id then means a new call, no id means "the current one". */
  private resolveIndex(index: number | undefined, id: string | undefined): number {
    if (index !== undefined) return index;
    if (id) {
      for (const [known, call] of this.calls) if (call.id === id) return known;
      return this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1;
    }
    return Math.max(this.lastIndex, 0);
  }
}
