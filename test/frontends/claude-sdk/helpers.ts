/**
 * Drives the BUILT mend (`bin/mend.js`, `npm run build` first) through the real, unchanged
 * `query()` of `@anthropic-ai/claude-agent-sdk`: the SDK spawns `node bin/mend.js …` with its
 * own flags; the scripted provider comes in through `extraArgs`, the sandbox through `env`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { query, type Options, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { BIN, baseEnv, type Sandbox } from '../../support/cli.js';

export interface Spawned {
  /** The mend processes the SDK started, in order (for SIGKILL). */
  children: ChildProcess[];
}

/** `script`: a scripted-responses file, or undefined for the OpenAI provider (its settings in `env`). */
export function claudeOptions(
  sb: Sandbox,
  script: string | undefined,
  extra: Partial<Options> & { envExtra?: Record<string, string> } = {},
  spawned?: Spawned,
): Options {
  const { extraArgs, envExtra, ...rest } = extra;
  return {
    cwd: sb.cwd,
    pathToClaudeCodeExecutable: BIN,
    env: baseEnv(sb, envExtra),
    extraArgs: { ...(script !== undefined ? { 'scripted-responses': script } : {}), ...extraArgs },
    ...(spawned
      ? {
          // The SDK's own hook for spawning: the same command, kept so a test can kill it.
          spawnClaudeCodeProcess: ({ command, args, cwd, env, signal }) => {
            const child = spawn(command, args, { cwd, env, signal, stdio: ['pipe', 'pipe', 'pipe'] });
            spawned.children.push(child);
            return child as never;
          },
        }
      : {}),
    ...rest,
  };
}

export async function collectAll(q: AsyncIterable<SDKMessage>): Promise<{ messages: SDKMessage[]; error: Error | undefined }> {
  const messages: SDKMessage[] = [];
  try {
    for await (const m of q) messages.push(m);
    return { messages, error: undefined };
  } catch (error) {
    return { messages, error: error as Error };
  }
}

export function runClaude(
  sb: Sandbox,
  prompt: Parameters<typeof query>[0]['prompt'],
  script: string | undefined,
  extra: Parameters<typeof claudeOptions>[2] = {},
) {
  return query({ prompt, options: claudeOptions(sb, script, extra) });
}

/** A prompt stream the test feeds by hand; `end()` closes mend's stdin. */
export function promptStream() {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const push = (text: string) => {
    queue.push(text);
    wake?.();
  };
  const end = () => {
    ended = true;
    wake?.();
  };
  async function* messages() {
    for (;;) {
      while (queue.length > 0) {
        yield { type: 'user' as const, session_id: '', parent_tool_use_id: null, message: { role: 'user' as const, content: queue.shift()! } };
      }
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  }
  return { push, end, messages: messages() };
}

export type { SDKMessage };
