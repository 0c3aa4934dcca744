/** The daemon's per-session journal: ids, bounded resumption, slow subscribers evicted, close. */
import { describe, expect, it } from 'vitest';
import { EventJournal } from '../../../src/frontends/daemon/event-journal.js';

const limits = { maxEvents: 5, maxBytes: 10_000, maxQueued: 3 };
const event = (n: number) => ({ type: 'session_update', data: { n } });

async function drain(subscriber: { next(): Promise<{ id: number } | null> }): Promise<number[]> {
  const ids: number[] = [];
  for (let e = await subscriber.next(); e; e = await subscriber.next()) ids.push(e.id);
  return ids;
}

describe('EventJournal', () => {
  it('numbers events from 1 and serializes each once with v: 1 and its id', () => {
    const journal = new EventJournal('epoch-1', limits);
    journal.append(event(1));
    const entry = journal.append({ ...event(2), promptId: 'p' })!;
    expect(entry.id).toBe(2);
    expect(JSON.parse(entry.json)).toEqual({ id: 2, v: 1, type: 'session_update', data: { n: 2 }, promptId: 'p' });
    expect(journal.lastId).toBe(2);
  });

  it('a subscriber with Last-Event-ID gets what it missed, then live events, until close', async () => {
    const journal = new EventJournal('e', limits);
    for (let i = 1; i <= 4; i++) journal.append(event(i));
    const { subscriber, replayed, complete } = journal.subscribe(2);
    expect({ replayed, complete }).toEqual({ replayed: 2, complete: true });
    journal.append(event(5));
    journal.close();
    expect(await drain(subscriber)).toEqual([3, 4, 5]);
    expect(journal.append(event(6))).toBeNull();
  });

  it('keeps only the newest events; resuming from before them is reported incomplete', () => {
    const journal = new EventJournal('e', limits);
    for (let i = 1; i <= 8; i++) journal.append(event(i));
    expect(journal.subscribe(1)).toMatchObject({ replayed: 5, complete: false });
    expect(journal.subscribe(3)).toMatchObject({ replayed: 5, complete: true });
    expect(journal.subscribe(undefined)).toMatchObject({ replayed: 0, complete: true });
  });

  it('a subscriber that falls more than maxQueued events behind is evicted and detached', async () => {
    const journal = new EventJournal('e', limits);
    const { subscriber } = journal.subscribe(undefined);
    for (let i = 1; i <= 4; i++) journal.append(event(i));
    expect(subscriber.evicted).toBe(true);
    expect(journal.subscriberCount).toBe(0);
    expect(await subscriber.next()).toBeNull();
  });

  it('takeQueued hands over what is queued at once, in order, and next() then waits for what comes after', async () => {
    const journal = new EventJournal('e', { ...limits, maxQueued: 10 });
    const { subscriber } = journal.subscribe(undefined);
    expect(subscriber.takeQueued()).toEqual([]);
    for (let i = 1; i <= 3; i++) journal.append(event(i));
    expect((await subscriber.next())!.id).toBe(1);
    expect(subscriber.takeQueued().map((e) => e.id)).toEqual([2, 3]);
    expect(subscriber.takeQueued()).toEqual([]);
    const later = subscriber.next();
    journal.append(event(4));
    expect((await later)!.id).toBe(4);
    journal.close();
    expect(await subscriber.next()).toBeNull();
  });
});
