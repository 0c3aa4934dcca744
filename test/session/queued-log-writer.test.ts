/**
 * The queued writer (the daemon's) against its oracle, SessionWriter: appended one at a
 * time, both leave the same bytes and give the same outcomes, with faults injected at
 * any record (failed write, failed fsync, torn write) and on a log that starts with a
 * torn tail. Appends made together are written in call order and made durable by one
 * fsync per batch; a failed fsync takes back its whole batch.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorCodeOf } from '../../src/errors.js';
import { readSessionLog } from '../../src/session/log-reader.js';
import { SessionWriter, type WriteFaultHook } from '../../src/session/log-writer.js';
import { QueuedLogWriter } from '../../src/session/queued-append/queued-log-writer.js';
import type { ChatRecord } from '../../src/session/records.js';
import { SID, assistant, jsonl, useTempDirs, user } from './helpers.js';

const tempDir = useTempDirs();

type Fault = { kind: 'none' } | { kind: 'fail-write' | 'fail-fsync' | 'torn'; at: number; errno: string };

function hookFor(fault: Fault): WriteFaultHook | undefined {
  switch (fault.kind) {
    case 'none':
      return undefined;
    case 'fail-write':
      return { beforeWrite: (index) => (index === fault.at ? { fail: fault.errno } : undefined) };
    case 'fail-fsync':
      return { beforeSync: (index) => (index === fault.at ? { fail: fault.errno } : undefined) };
    case 'torn':
      return { beforeWrite: (index, data) => (index === fault.at ? data.subarray(0, Math.max(1, data.length >> 1)) : undefined) };
  }
}

function records(n: number): ChatRecord[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0 ? user({ uuid: `u${i}`, text: `prompt ${i} ${'x'.repeat(i * 7)}` }) : assistant({ uuid: `a${i}`, parentUuid: `u${i - 1}` }),
  );
}

/** Each append's outcome: 'ok' or the error code. */
async function runSync(file: string, create: boolean, recs: ChatRecord[], durable: boolean[], hook: WriteFaultHook | undefined): Promise<string[]> {
  const w = SessionWriter.open(file, { create, ...(hook ? { faultHook: hook } : {}) });
  const out: string[] = [];
  for (const [i, r] of recs.entries()) {
    try {
      w.append(r, { durable: durable[i]! });
      out.push('ok');
    } catch (error) {
      out.push(errorCodeOf(error));
    }
  }
  w.close();
  return out;
}

async function runQueued(file: string, create: boolean, recs: ChatRecord[], durable: boolean[], hook: WriteFaultHook | undefined): Promise<string[]> {
  const w = QueuedLogWriter.open(file, { create, ...(hook ? { faultHook: hook } : {}) });
  const out: string[] = [];
  for (const [i, r] of recs.entries()) {
    try {
      await w.append(r, { durable: durable[i]! });
      out.push('ok');
    } catch (error) {
      out.push(errorCodeOf(error));
    }
  }
  await w.close();
  return out;
}

const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  fc.constant<Fault>({ kind: 'none' }),
  fc.record({
    kind: fc.constantFrom('fail-write' as const, 'fail-fsync' as const, 'torn' as const),
    at: fc.nat(7),
    errno: fc.constantFrom('EIO', 'ENOSPC', 'EBADF'),
  }),
);

describe('QueuedLogWriter', () => {
  it('one append at a time: the same bytes and outcomes as SessionWriter, faults and torn tails included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        faultArb,
        fc.constantFrom('', 'torn', '{"complete":true}\n'),
        async (n, durable, fault, existing) => {
          const dir = tempDir();
          const recs = records(n);
          const outcomes: string[][] = [];
          const bytes: string[] = [];
          for (const [name, run] of [
            ['sync', runSync],
            ['queued', runQueued],
          ] as const) {
            const file = join(dir, name, `${SID}.jsonl`);
            const create = existing === '';
            if (!create) {
              fs.mkdirSync(join(dir, name), { recursive: true });
              fs.writeFileSync(file, existing);
            }
            outcomes.push(await run(file, create, structuredClone(recs), durable, hookFor(fault)));
            bytes.push(fs.readFileSync(file, 'utf8'));
          }
          expect(outcomes[1]).toEqual(outcomes[0]);
          expect(bytes[1]).toBe(bytes[0]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('appends made together: written in call order, one fsync per batch', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const w = QueuedLogWriter.open(file, { create: true });
    const recs = records(40);
    // The first append starts a batch on its own; the other 39 arrive while it is on disk.
    await Promise.all(recs.map((r, i) => w.append(r, { durable: i % 3 !== 1 })));
    expect(w.recordCount).toBe(40);
    expect(w.syncCount).toBe(2);
    await w.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(jsonl(recs));
    expect((await readSessionLog(file)).records.map((r) => r.record)).toEqual(recs);
  });

  it('a failed fsync takes back its whole batch (none of it was acknowledged); the next append goes on', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    // Record 3's fsync fails: it shares a batch with record 4 (and maybe 2, which arrive together).
    const w = QueuedLogWriter.open(file, { create: true, faultHook: { beforeSync: (index) => (index === 3 ? { fail: 'EIO' } : undefined) } });
    const recs = records(6);
    await w.append(recs[0]!, { durable: false });
    await w.append(recs[1]!, { durable: true });
    const together = await Promise.allSettled(recs.slice(2, 5).map((r) => w.append(r, { durable: true })));
    const outcomes = together.map((s) => (s.status === 'fulfilled' ? 'ok' : errorCodeOf(s.reason)));
    expect(outcomes.slice(1)).toEqual(['store_unavailable', 'store_unavailable']);
    await w.append(recs[5]!, { durable: true });
    await w.close();
    // What was acknowledged is in the log, and nothing else.
    const acknowledged = [recs[0]!, recs[1]!, ...(outcomes[0] === 'ok' ? [recs[2]!] : []), recs[5]!];
    expect(fs.readFileSync(file, 'utf8')).toBe(jsonl(acknowledged));
  });

  it('close waits for what is queued; appends after it are refused', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const w = QueuedLogWriter.open(file, { create: true });
    const recs = records(5);
    const pending = recs.map((r) => w.append(r, { durable: true }));
    await w.close();
    await Promise.all(pending);
    expect(fs.readFileSync(file, 'utf8')).toBe(jsonl(recs));
    await expect(w.append(user({ uuid: 'late' }), { durable: true })).rejects.toThrow(/closed/);
  });

  it('refuses an invalid record without touching the log', async () => {
    const file = join(tempDir(), `${SID}.jsonl`);
    const w = QueuedLogWriter.open(file, { create: true });
    await expect(w.append({ ...user({ uuid: 'bad' }), type: 'nonsense' } as unknown as ChatRecord, { durable: true })).rejects.toThrow(/invalid record/);
    await w.close();
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });
});
