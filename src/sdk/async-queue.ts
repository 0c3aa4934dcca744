/**
 * An unbounded single-consumer queue: producers push without waiting, the consumer
 * awaits. It ends normally (end) or with an error (fail) once the buffered items are read.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | null = null;
  private done = false;
  private error: { value: unknown } | null = null;

  push(item: T): void {
    if (this.done) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w.resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  end(): void {
    this.finish(null);
  }

  fail(error: unknown): void {
    this.finish({ value: error });
  }

  get ended(): boolean {
    return this.done;
  }

  /** True while the consumer is blocked in next() on an empty queue. */
  get waiting(): boolean {
    return this.waiter !== null;
  }

  /** Drops the buffered items (the queue still ends or fails as before). */
  discard(): void {
    this.items.length = 0;
  }

  private finish(error: { value: unknown } | null): void {
    if (this.done) return;
    this.done = true;
    this.error = error;
    if (this.waiter && this.items.length === 0) {
      const w = this.waiter;
      this.waiter = null;
      this.settleEnd(w);
    }
  }

  private settleEnd(w: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void }): void {
    if (this.error) {
      const e = this.error.value;
      this.error = null; // thrown once; later reads just end
      w.reject(e);
    } else {
      w.resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
    if (this.done) return new Promise((resolve, reject) => this.settleEnd({ resolve, reject }));
    if (this.waiter) return Promise.reject(new Error('AsyncQueue supports one reader at a time'));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return { next: () => this.next() };
  }
}
