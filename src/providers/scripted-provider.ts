/**
 * A provider that plays back a fixed script, for tests and the crash demo. The response
 * played is picked by how many model entries the history already holds, so a process
 * resumed after a crash continues the script where the crashed one stopped.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { MendError } from '../errors.js';
import type { Content } from '../session/records.js';
import type { ModelProvider, ModelRequest, ProviderEvent } from './provider.js';

export const ScriptedToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()).default({}),
});

export const ScriptedResponseSchema = z.object({
  text: z.string().optional(),
  thought: z.string().optional(),
  toolCalls: z.array(ScriptedToolCallSchema).optional(),
  /** Pause after the first text chunk (or before the tool calls when there is no text). */
  stallMs: z.union([z.number().int().nonnegative(), z.literal('forever')]).optional(),
  chunkSize: z.number().int().positive().optional(),
  delayMs: z.number().int().nonnegative().optional(),
});
export type ScriptedResponse = z.infer<typeof ScriptedResponseSchema>;

export const ScriptSchema = z.array(ScriptedResponseSchema);
export type Script = z.infer<typeof ScriptSchema>;
/** What a script author writes (`args` may be omitted). */
export type ScriptInput = z.input<typeof ScriptSchema>;

const DEFAULT_CHUNK_SIZE = 16;
// setTimeout's largest delay; waiting "forever" is a chain of these.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Reads and validates a script file. Problems become `provider_config_missing`, like any unusable provider setup. */
export async function loadScript(path: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new MendError('provider_config_missing', `cannot read model script ${path}: ${(error as Error).message}`, {
      provider: 'scripted',
      path,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new MendError('provider_config_missing', `model script ${path} is not valid JSON: ${(error as Error).message}`, {
      provider: 'scripted',
      path,
    });
  }
  return parseScript(json, `model script ${path}`, path);
}

function parseScript(value: unknown, label: string, path?: string): Script {
  const parsed = ScriptSchema.safeParse(value);
  if (!parsed.success) {
    throw new MendError('provider_config_missing', `${label} is invalid: ${z.prettifyError(parsed.error)}`, {
      provider: 'scripted',
      ...(path === undefined ? {} : { path }),
    });
  }
  return parsed.data;
}

export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted';
  readonly model = 'scripted';
  private script: Script | undefined;
  private readonly path: string | undefined;

  /** Takes a parsed script, or a file path that is read on the first model call (config is checked only when needed). */
  constructor(source: ScriptInput | { path: string }) {
    if (Array.isArray(source)) this.script = parseScript(source, 'model script');
    else this.path = source.path;
  }

  async *stream(req: ModelRequest): AsyncGenerator<ProviderEvent> {
    this.script ??= await loadScript(this.path ?? '');
    const script = this.script;
    const index = countModelEntries(req.history);
    const response = script[index];
    if (!response) {
      throw new MendError('script_exhausted', `model script has ${script.length} responses; this request needs response ${index + 1}`, {
        index,
        length: script.length,
      });
    }
    const signal = req.signal;
    const chunkSize = response.chunkSize ?? DEFAULT_CHUNK_SIZE;
    const delayMs = response.delayMs ?? 0;
    let emitted = 0;
    // Checks the signal before every event so an abort stops the stream between chunks.
    const next = async (): Promise<void> => {
      throwIfAborted(signal);
      if (emitted > 0 && delayMs > 0) await sleep(delayMs, signal);
      emitted += 1;
    };

    for (const piece of chunk(response.thought ?? '', chunkSize)) {
      await next();
      yield { type: 'thought_delta', text: piece };
    }
    let stalled = false;
    for (const piece of chunk(response.text ?? '', chunkSize)) {
      await next();
      yield { type: 'text_delta', text: piece };
      if (!stalled && response.stallMs !== undefined) {
        stalled = true;
        await sleep(response.stallMs, signal);
      }
    }
    if (!stalled && response.stallMs !== undefined) await sleep(response.stallMs, signal);

    const calls = response.toolCalls ?? [];
    let outputChars = (response.thought ?? '').length + (response.text ?? '').length;
    for (const [callIndex, call] of calls.entries()) {
      await next();
      yield { type: 'tool_call_start', index: callIndex, id: call.id, name: call.name };
      const args = JSON.stringify(call.args);
      outputChars += args.length;
      for (const piece of chunk(args, chunkSize)) {
        await next();
        yield { type: 'tool_call_delta', index: callIndex, argsDelta: piece };
      }
    }
    throwIfAborted(signal);
    yield {
      type: 'finish',
      stopReason: calls.length > 0 ? 'tool_use' : 'end_turn',
      usage: { inputTokens: Math.ceil(JSON.stringify(req.history).length / 4), outputTokens: Math.ceil(outputChars / 4) },
    };
  }
}

export function countModelEntries(history: readonly Content[]): number {
  return history.filter((entry) => entry.role === 'model').length;
}

function chunk(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new MendError('aborted', 'model request aborted');
}

/** Abortable sleep. 'forever' keeps a timer armed so the process stays alive until aborted or killed. */
function sleep(ms: number | 'forever', signal: AbortSignal | undefined): Promise<void> {
  throwIfAborted(signal);
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new MendError('aborted', 'model request aborted'));
    };
    const arm = (remaining: number | 'forever'): void => {
      const step = remaining === 'forever' ? MAX_TIMER_MS : Math.min(remaining, MAX_TIMER_MS);
      timer = setTimeout(() => {
        const left = remaining === 'forever' ? 'forever' : remaining - step;
        if (left === 'forever' || left > 0) return arm(left);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, step);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    arm(ms);
  });
}
