/** The turn queue: one job at a time, in order, and a job added as the last one settles still runs. */
import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../src/runtime/turn-queue.js';

describe('TurnQueue', () => {
  it('runs jobs one at a time, in the order they were added', async () => {
    const queue = new TurnQueue(undefined);
    const log: string[] = [];
    const job = (name: string) => async () => {
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([queue.add(job('a')), queue.add(job('b')), queue.add(job('c'))]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('a job added the moment the previous one settles runs (two awaited prompts in a row)', { timeout: 30_000 }, async () => {
    const queue = new TurnQueue(undefined);
    const ran: number[] = [];
    // Each job is added in the continuation of the previous one's outcome, when the pump's
    // loop has just found the queue empty and its promise has not settled yet. A queue that
    // missed such a job would hang here (the test's timeout).
    for (let i = 0; i < 20; i++) {
      const outcome = await queue.add(async () => {
        ran.push(i);
        return i;
      });
      expect(outcome).toBe(i);
    }
    expect(ran).toEqual(Array.from({ length: 20 }, (_, i) => i));
    await queue.drain();
    expect(queue.busy).toBe(false);
  });
});
