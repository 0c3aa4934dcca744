/**
 * Chooses and builds the model provider from flags and the environment. Only
 * called when a model request is about to be made, so runs that never talk to a
 * model (inspecting a session) need no configuration at all.
 */
import { MendError } from '../errors.js';
import type { ModelProvider } from '../providers/provider.js';
import type { RunOptions } from './args.js';

export interface ProviderEnv {
  OPENAI_API_KEY?: string | undefined;
  OPENAI_BASE_URL?: string | undefined;
  OPENAI_MODEL?: string | undefined;
  /** Test hook: retries of the OpenAI client (default 2). */
  MEND_OPENAI_MAX_RETRIES?: string | undefined;
}

export function providerName(options: RunOptions): 'openai' | 'scripted' {
  return options.provider ?? (options.scriptedResponses !== undefined ? 'scripted' : 'openai');
}

/** The model name shown in `init` before any provider is built. */
export function configuredModel(options: RunOptions, env: ProviderEnv): string | null {
  if (providerName(options) === 'scripted') return 'scripted';
  return options.model ?? env.OPENAI_MODEL ?? null;
}

export function lazyProvider(options: RunOptions, env: ProviderEnv): () => Promise<ModelProvider> {
  let provider: Promise<ModelProvider> | undefined;
  return () => (provider ??= build(options, env));
}

async function build(options: RunOptions, env: ProviderEnv): Promise<ModelProvider> {
  if (providerName(options) === 'scripted') {
    if (options.scriptedResponses === undefined) {
      throw new MendError('provider_config_missing', '--provider scripted needs --scripted-responses FILE');
    }
    const { ScriptedProvider } = await import('../providers/scripted-provider.js');
    return new ScriptedProvider({ path: options.scriptedResponses });
  }
  const { OpenAIProvider } = await import('../providers/openai-provider.js');
  const retries = env.MEND_OPENAI_MAX_RETRIES === undefined ? undefined : Number(env.MEND_OPENAI_MAX_RETRIES);
  return new OpenAIProvider({
    apiKey: env.OPENAI_API_KEY,
    baseURL: options.baseUrl ?? env.OPENAI_BASE_URL,
    model: options.model ?? env.OPENAI_MODEL,
    maxRetries: retries !== undefined && Number.isInteger(retries) && retries >= 0 ? retries : undefined,
  });
}
