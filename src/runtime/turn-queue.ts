/**
 * Runs a session's turns one at a time, in the order they were added. Adding is
 * synchronous, so a decision made right before `add` cannot be overtaken by work
 * that arrives while an earlier job awaits. Each job gets the abort signal of its
 * turn: interrupt() aborts only the running one, the process-wide stop signal
 * aborts it and marks every later job as stopped (each still settles).
 */
export class TurnQueue {
  private readonly jobs: Array<() => Promise<void>> = [];
  private running: AbortController | null = null;
  private pumping: Promise<void> | null = null;

  constructor(private readonly stop: AbortSignal | undefined) {
    stop?.addEventListener('abort', () => this.running?.abort(stop.reason), { once: true });
  }

  get busy(): boolean {
    return this.running !== null || this.jobs.length > 0;
  }

  get stopped(): boolean {
    return this.stop?.aborted === true;
  }

  /** The signal of the running job (aborted by interrupt() or the stop signal). */
  signal(): AbortSignal {
    return this.running?.signal ?? AbortSignal.abort('no turn is running');
  }

  add<T>(job: (stopped: boolean) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.jobs.push(async () => {
        try {
          resolve(await job(this.stopped));
        } catch (error) {
          reject(error);
        }
      });
      this.pumping ??= this.pump().finally(() => {
        this.pumping = null;
      });
    });
  }

  interrupt(reason: string): boolean {
    if (!this.running) return false;
    this.running.abort(reason);
    return true;
  }

  /** Resolves once every job added so far (and any they add) has settled. */
  async drain(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  private async pump(): Promise<void> {
    for (let job = this.jobs.shift(); job; job = this.jobs.shift()) {
      const controller = new AbortController();
      if (this.stop?.aborted) controller.abort(this.stop.reason);
      this.running = controller;
      try {
        await job();
      } finally {
        this.running = null;
      }
    }
  }
}
