/**
 * One open session's events, numbered from 1 in an epoch of their own, kept in a
 * bounded journal (by count and by bytes) so a client that reconnects with
 * `Last-Event-ID` gets what it missed. Every attached client reads the same
 * journal, so two clients see the same events in the same order.
 *
 * Each subscriber has a bounded queue: a client that reads too slowly is
 * evicted (it may reconnect and resume from the journal) instead of letting
 * the daemon's memory grow. Events are serialized once, when appended.
 */

export interface JournalLimits {
  /** Events kept for Last-Event-ID resumption. */
  maxEvents: number;
  /** Serialized bytes kept for resumption. */
  maxBytes: number;
  /** Frames one subscriber may have waiting before it is evicted. */
  maxQueued: number;
}

export interface JournalEntry {
  id: number;
  type: string;
  /** The event as sent in `data:`. */
  json: string;
}

/** An event before the journal numbers it (the envelope of daemon-events.ts without `id` and `v`). */
export interface EventInput {
  type: string;
  data: Record<string, unknown>;
  promptId?: string;
  originatorClientId?: string;
  _meta?: { mend: { messages: Array<{ type: string }> } };
}

export class Subscriber {
  private readonly queue: JournalEntry[] = [];
  private wake: (() => void) | null = null;
  private ended = false;
  /** Set when the queue overflowed; the stream then tells the client and ends. */
  evicted = false;

  constructor(
    private maxQueued: number,
    private readonly detach: (s: Subscriber) => void,
  ) {}

  /** What a reconnecting client missed: queued without counting against its live limit. */
  preload(entries: readonly JournalEntry[]): void {
    this.queue.push(...entries);
    this.maxQueued += entries.length;
  }

  push(entry: JournalEntry): void {
    if (this.ended) return;
    if (this.queue.length >= this.maxQueued) {
      this.evicted = true;
      this.end();
      return;
    }
    this.queue.push(entry);
    this.wakeUp();
  }

  /** The next entry; null once the journal closed (or the subscriber ended) and the queue is drained. */
  async next(): Promise<JournalEntry | null> {
    for (;;) {
      const entry = this.queue.shift();
      if (entry) return entry;
      if (this.ended) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** What is queued now, taken at once (none: an empty array); next() waits for what comes after. */
  takeQueued(): JournalEntry[] {
    return this.queue.splice(0, this.queue.length);
  }

  /** Stops delivery; what is queued is still read (unless evicted: then it is dropped). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.evicted) this.queue.length = 0;
    this.detach(this);
    this.wakeUp();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

export class EventJournal {
  private readonly entries: JournalEntry[] = [];
  private bytes = 0;
  private nextId = 1;
  private readonly subscribers = new Set<Subscriber>();
  private closed = false;

  constructor(
    readonly epoch: string,
    private readonly limits: JournalLimits,
  ) {}

  get lastId(): number {
    return this.nextId - 1;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Numbers, keeps and delivers an event. Ignored once the journal is closed. */
  append(input: EventInput): JournalEntry | null {
    if (this.closed) return null;
    const id = this.nextId++;
    const entry: JournalEntry = { id, type: input.type, json: JSON.stringify({ id, v: 1, ...input }) };
    this.entries.push(entry);
    this.bytes += entry.json.length;
    while (this.entries.length > this.limits.maxEvents || (this.bytes > this.limits.maxBytes && this.entries.length > 1)) {
      this.bytes -= this.entries.shift()!.json.length;
    }
    for (const s of [...this.subscribers]) s.push(entry);
    return entry;
  }

  /**
   * A new subscriber that first receives every kept event after `afterId` (when
   * given), then live ones. `complete` is false when events after `afterId` were
   * already dropped from the journal (the client must resync).
   */
  subscribe(afterId: number | undefined, maxQueued = this.limits.maxQueued): { subscriber: Subscriber; replayed: number; complete: boolean } {
    const subscriber = new Subscriber(Math.min(maxQueued, this.limits.maxQueued), (s) => this.subscribers.delete(s));
    let missed: JournalEntry[] = [];
    let complete = true;
    if (afterId !== undefined && afterId < this.lastId) {
      const first = this.entries[0]?.id ?? this.nextId;
      complete = afterId >= first - 1;
      missed = this.entries.filter((entry) => entry.id > afterId);
      subscriber.preload(missed);
    }
    const replayed = missed.length;
    if (this.closed) subscriber.end();
    else this.subscribers.add(subscriber);
    return { subscriber, replayed, complete };
  }

  /** Ends every subscriber once it has read what is queued; nothing is appended afterwards. */
  close(): void {
    this.closed = true;
    for (const s of [...this.subscribers]) s.end();
  }
}
