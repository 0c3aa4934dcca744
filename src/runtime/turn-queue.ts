/**
 * Runs a session's turns one at a time, in the order they were added. Adding is
 * synchronous, so a decision made right before `add` cannot be overtaken by work
 * that arrives while an earlier job awaits. Each job gets the abort signal of its
 * turn: interrupt() aborts only the running one, the process-wide stop signal
 * aborts it and marks every later job as stopped (each still settles).
 */
interface Job {
  /** Set by an interrupt that arrived before the job started: it starts aborted. */
  interrupted?: string;
  run: (stopped: boolean) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class TurnQueue {
  private readonly jobs: Job[] = [];
  private runningJob: AbortController | null = null;
  private pumping: Promise<void> | null = null;

  private readonly onStop = (): void => this.runningJob?.abort(this.stop?.reason);

  constructor(private readonly stop: AbortSignal | undefined) {
    stop?.addEventListener('abort', this.onStop, { once: true });
  }

  /**
   * Stops listening to the process-wide stop signal (a closed session): a long-lived host
   * (ACP, the daemon) opens many sessions on one signal, and each would otherwise keep a listener.
   */
  dispose(): void {
    this.stop?.removeEventListener('abort', this.onStop);
  }

  private readonly roomWaiters: Array<{ limit: number; resolve: () => void }> = [];

  /** Jobs waiting to start. */
  get waiting(): number {
    return this.jobs.length;
  }

  whenBelow(limit: number): Promise<void> {
    if (this.jobs.length < limit) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push({ limit, resolve }));
  }

  private notifyRoom(): void {
    for (let i = this.roomWaiters.length - 1; i >= 0; i--) {
      const waiter = this.roomWaiters[i]!;
      if (this.jobs.length < waiter.limit) {
        this.roomWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  /** A job is running right now. */
  get running(): boolean {
    return this.runningJob !== null;
  }

  get busy(): boolean {
    return this.runningJob !== null || this.jobs.length > 0;
  }

  get stopped(): boolean {
    return this.stop?.aborted === true;
  }

  /** The signal of the running job (aborted by interrupt() or the stop signal). */
  signal(): AbortSignal {
    return this.runningJob?.signal ?? AbortSignal.abort('no turn is running');
  }

  /** Queues a job; it starts after add() has returned, never inside it. */
  add<T>(job: (stopped: boolean) => Promise<T>): Promise<T> {
    const settled = new Promise<T>((resolve, reject) => {
      this.jobs.push({ run: job, resolve: resolve as (value: unknown) => void, reject });
    });
    // A pump whose loop has ended but whose promise has not settled yet would never see
    // this job: a new one is started as soon as the loop is done (looping, cleared synchronously).
    if (!this.looping) {
      this.looping = true;
      const pumping = this.pump().finally(() => {
        if (this.pumping === pumping) this.pumping = null;
      });
      this.pumping = pumping;
    }
    return settled;
  }

  /**
   * Aborts the running job; with none running, the next queued one (a host that sent a
   * prompt and at once an interrupt means that prompt, even if it has not started yet).
   */
  interrupt(reason: string): boolean {
    if (this.runningJob) {
      this.runningJob.abort(reason);
      return true;
    }
    const next = this.jobs[0];
    if (!next) return false;
    next.interrupted = reason;
    return true;
  }

  /** Resolves once every job added so far (and any they add) has settled. */
  async drain(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  private looping = false;

  private next(): Job | undefined {
    const job = this.jobs.shift();
    if (job === undefined) this.looping = false;
    return job;
  }

  private async pump(): Promise<void> {
    await Promise.resolve();
    await this.runJobs();
  }

  /** Runs queued jobs; `looping` is cleared in the same step that finds the queue empty. */
  private async runJobs(): Promise<void> {
    for (let job = this.next(); job; job = this.next()) {
      this.notifyRoom();
      const controller = new AbortController();
      if (this.stop?.aborted) controller.abort(this.stop.reason);
      else if (job.interrupted !== undefined) controller.abort(job.interrupted);
      this.runningJob = controller;
      let result: { ok: true; value: unknown } | { ok: false; error: unknown };
      try {
        result = { ok: true, value: await job.run(this.stopped) };
      } catch (error) {
        result = { ok: false, error };
      }
      // Not running any more before anyone hears the outcome: a caller that acts on it
      // at once (another continue) must not be told a turn is still running.
      this.runningJob = null;
      if (result.ok) job.resolve(result.value);
      else job.reject(result.error);
    }
  }
}
