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
  /** `sdk`: model requests through the `openai` package (the oracle) instead of node's HTTP client. */
  MEND_OPENAI_TRANSPORT?: string | undefined;
}

export type ProviderOptions = Pick<RunOptions, 'provider' | 'scriptedResponses' | 'model' | 'baseUrl'> & Partial<Pick<RunOptions, 'fallbackModel'>>;

export function providerName(options: ProviderOptions): 'openai' | 'scripted' {
  return options.provider ?? (options.scriptedResponses !== undefined ? 'scripted' : 'openai');
}

/** The model name shown in `init` before any provider is built. */
export function configuredModel(options: ProviderOptions, env: ProviderEnv): string | null {
  if (providerName(options) === 'scripted') return 'scripted';
  return options.model ?? env.OPENAI_MODEL ?? null;
}

/** Builds once; a failed build is retried on the next call (the settings may have changed). */
export function lazyProvider(options: ProviderOptions, env: ProviderEnv): () => Promise<ModelProvider> {
  let provider: Promise<ModelProvider> | undefined;
  return () => {
    provider ??= build(options, env).catch((error: unknown) => {
      provider = undefined;
      throw error;
    });
    return provider;
  };
}

async function build(options: ProviderOptions, env: ProviderEnv): Promise<ModelProvider> {
  if (providerName(options) === 'scripted') {
    if (options.scriptedResponses === undefined) {
      throw new MendError('provider_config_missing', '--provider scripted needs --scripted-responses FILE');
    }
    const { ScriptedProvider, loadScript } = await import('../providers/scripted-provider.js');
    // Read and validated now, before the run writes anything.
    return new ScriptedProvider(await loadScript(options.scriptedResponses));
  }
  const model = options.model ?? env.OPENAI_MODEL;
  if (!env.OPENAI_API_KEY) throw new MendError('provider_config_missing', 'no API key: set OPENAI_API_KEY (or use --scripted-responses FILE)');
  if (!model) throw new MendError('provider_config_missing', 'no model: pass --model or set OPENAI_MODEL');
  const baseURL = options.baseUrl ?? env.OPENAI_BASE_URL;
  if (baseURL !== undefined && baseURL !== '') checkBaseUrl(baseURL, options.baseUrl !== undefined ? '--base-url' : 'OPENAI_BASE_URL');
  const { OpenAIProvider } = await import('../providers/openai-provider.js');
  const retries = env.MEND_OPENAI_MAX_RETRIES === undefined ? undefined : Number(env.MEND_OPENAI_MAX_RETRIES);
  const settings = {
    apiKey: env.OPENAI_API_KEY,
    baseURL,
    maxRetries: retries !== undefined && Number.isInteger(retries) && retries >= 0 ? retries : undefined,
    transport: env.MEND_OPENAI_TRANSPORT === 'sdk' ? ('sdk' as const) : ('http' as const),
  };
  const primary = new OpenAIProvider({ ...settings, model });
  if (!options.fallbackModel || options.fallbackModel === model) return primary;
  const { FallbackProvider } = await import('../providers/fallback-provider.js');
  return new FallbackProvider(primary, new OpenAIProvider({ ...settings, model: options.fallbackModel }));
}

/** `localhost:8000/v1` (no scheme) would fail only as a failed request, recorded in the session: refuse it first. */
function checkBaseUrl(value: string, source: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new MendError('provider_config_missing', `${source} must be an http:// or https:// URL (got ${JSON.stringify(value)})`);
  }
}
