/**
 * `--fallback-model` (Claude's and Qwen's SDKs pass it): when the main model's request fails
 * with a provider error before it produced anything, the same request goes to the fallback
 * model. Once output has streamed the failure stands: retrying then would show the host two
 * beginnings of one answer. An abort is never retried.
 */
import { isMendError } from '../errors.js';
import type { ModelProvider, ModelRequest, ProviderEvent } from './provider.js';

export class FallbackProvider implements ModelProvider {
  /** The model that answered last (the main one until a fallback happened). */
  private answering: ModelProvider;

  constructor(
    private readonly primary: ModelProvider,
    private readonly fallback: ModelProvider,
  ) {
    this.answering = primary;
  }

  get name(): string {
    return this.answering.name;
  }

  get model(): string {
    return this.answering.model;
  }

  async *stream(req: ModelRequest): AsyncIterable<ProviderEvent> {
    this.answering = this.primary;
    let produced = false;
    try {
      for await (const event of this.primary.stream(req)) {
        produced = true;
        yield event;
      }
      return;
    } catch (error) {
      if (produced || req.signal?.aborted === true || !isMendError(error, 'provider_error')) throw error;
    }
    this.answering = this.fallback;
    yield* this.fallback.stream(req);
  }
}
