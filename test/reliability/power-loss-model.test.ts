/**
 * The power-loss harness's own model, in process, on hand-written strace output: what
 * counts as durable, which states it builds, and that its checks catch a record shown
 * before its fsync (the end-to-end file runs it on real traces).
 */
import { describe, expect, it } from 'vitest';
import { durableFrom, statesAt } from '../support/power-loss/crash-states.js';
import { diskTrace } from '../support/power-loss/disk-ops.js';
import { checkPowerLoss } from '../support/power-loss/state-checks.js';
import { parseStrace } from '../support/power-loss/strace-log.js';

const SB = '/sb';
const hex = (s: string | Buffer) => [...Buffer.from(s)].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
const q = (s: string | Buffer) => `"${hex(s)}"`;
const fd = (n: number, path: string) => `${n}<${hex(path)}>`;

function record(uuid: string, parent: string | null, type: 'user' | 'assistant'): string {
  const base = { uuid, parentUuid: parent, sessionId: '11111111-2222-4333-8444-555555555555', timestamp: '2026-01-01T00:00:00.000Z' };
  const body =
    type === 'user'
      ? { type, provenance: 'real_user', message: { role: 'user', parts: [{ text: 'hi' }] } }
      : { type, provenance: 'assistant_output', model: 'm', message: { role: 'model', parts: [{ text: 'hello' }] } };
  return JSON.stringify({ ...base, ...body }) + '\n';
}

const LOG = `${SB}/home/11111111-2222-4333-8444-555555555555.jsonl`;
const HOME = `${SB}/home`;

/** mkdir home, create the log, write + fsync a user record, fsync the folders; then an assistant record and an ack (stdout, or `socketAck`'s bytes on a TCP socket). */
function trace(ackBeforeSync: boolean, socketAck?: string): string {
  const a = record('a', null, 'user');
  const b = record('b', 'a', 'assistant');
  const lines = [
    `100 mkdir(${q(HOME)}, 0700) = 0`,
    `100 openat(AT_FDCWD<${hex(SB)}>, ${q(LOG)}, O_RDWR|O_CREAT|O_EXCL|O_APPEND|O_CLOEXEC, 0600) = ${fd(3, LOG)}`,
    `100 write(${fd(3, LOG)}, ${q(a)}, ${a.length}) = ${a.length}`,
    `100 fsync(${fd(3, LOG)}) = 0`,
    `100 openat(AT_FDCWD<${hex(SB)}>, ${q(HOME)}, O_RDONLY|O_DIRECTORY) = ${fd(4, HOME)}`,
    `100 fsync(${fd(4, HOME)}) = 0`,
    `100 close(${fd(4, HOME)}) = 0`,
    `100 openat(AT_FDCWD<${hex(SB)}>, ${q(SB)}, O_RDONLY|O_DIRECTORY) = ${fd(4, SB)}`,
    `100 fsync(${fd(4, SB)}) = 0`,
    `100 close(${fd(4, SB)}) = 0`,
    // The second record, written by a thread in two halves.
    `101 write(${fd(3, LOG)}, ${q(b)}, ${b.length} <unfinished ...>`,
    `100 clone3({flags=CLONE_VM|CLONE_THREAD}, 88) = 101`,
    `101 <... write resumed>) = ${b.length}`,
  ];
  const ack =
    socketAck === undefined
      ? `100 write(1<${hex('pipe:[7]')}>, ${q('{"type":"result"}\n')}, 18) = 18`
      : `100 write(${fd(5, 'TCP:[127.0.0.1:4000->127.0.0.1:5000]')}, ${q(socketAck)}, ${socketAck.length}) = ${socketAck.length}`;
  const sync = `100 fsync(${fd(3, LOG)}) = 0`;
  lines.push(...(ackBeforeSync ? [ack, sync] : [sync, ack]));
  return lines.join('\n') + '\n';
}

const before = [{ path: SB, kind: 'dir' as const }];

describe('power-loss model', () => {
  it('joins unfinished and resumed halves and keeps threads as mend', () => {
    const calls = parseStrace(trace(false));
    const resumed = calls.find((c) => c.pid === 101 && c.name === 'write')!;
    expect(resumed.exit).toBeGreaterThan(resumed.entry);
    const t = diskTrace(calls, SB, SB, before);
    expect(t.ops.filter((op) => op.t === 'write')).toHaveLength(2);
    expect(t.barriers).toEqual([expect.objectContaining({ kind: 'stdout' })]);
  });

  it('a file is lost until its folder is fsynced; unsynced writes come back torn, as NUL, or as a hole', () => {
    const t = diskTrace(parseStrace(trace(false)), SB, SB, before);
    const durable = durableFrom(t);
    const firstSync = t.ops.find((op) => op.t === 'fsync')!.at;
    // After the log's fsync but before its folders': the durable state has no log.
    const early = statesAt(t, durable, firstSync);
    expect(early.find((s) => s.label === 'durable only')!.files.has(LOG)).toBe(false);
    expect(
      early
        .find((s) => s.label === 'everything written')!
        .files.get(LOG)!
        .toString(),
    ).toBe(record('a', null, 'user'));

    // With the second record written but not synced: torn, NUL, prefix states.
    const secondWrite = t.ops.filter((op) => op.t === 'write')[1]!.at;
    const labels = statesAt(t, durable, secondWrite).map((s) => s.label);
    expect(labels).toEqual(
      expect.arrayContaining(['durable only', 'everything written', expect.stringMatching(/torn after 1 byte/), expect.stringMatching(/grown as NUL/)]),
    );
    const nul = statesAt(t, durable, secondWrite).find((s) => /grown as NUL/.test(s.label))!;
    const log = nul.files.get(LOG)!;
    expect(log.subarray(record('a', null, 'user').length).every((b) => b === 0)).toBe(true);
  });

  it('flags a record shown before its fsync, and passes the same run with the fsync first', async () => {
    const isLog = (p: string) => p.endsWith('.jsonl');
    const bad = await checkPowerLoss(diskTrace(parseStrace(trace(true)), SB, SB, before), { isLog, cwd: SB });
    expect(bad.violations.map((v) => v.rule)).toContain('acknowledged_record_lost');
    expect(bad.violations.every((v) => v.detail.includes(' b '))).toBe(true);
    const good = await checkPowerLoss(diskTrace(parseStrace(trace(false)), SB, SB, before), { isLog, cwd: SB });
    expect(good.violations).toEqual([]);
    expect(good.states).toBeGreaterThan(5);
  });

  it('a socket message sent while a record waits for its fsync acknowledges it only if it reveals it (uuid or echoed prompt)', async () => {
    const isLog = (p: string) => p.endsWith('.jsonl');
    const check = async (ack: string, ackBeforeSync: boolean) =>
      (await checkPowerLoss(diskTrace(parseStrace(trace(ackBeforeSync, ack)), SB, SB, before), { isLog, cwd: SB })).violations.map((v) => v.rule);
    // Another session's event (or this session's earlier deltas) while record b is in flight: no acknowledgement of b.
    const unrelated =
      'id: 7\nevent: session_update\ndata: {"id":7,"v":1,"type":"session_update","data":{"update":{"content":{"type":"text","text":"hel"}}}}\n\n';
    expect(await check(unrelated, true)).toEqual([]);
    // An event naming b before b's fsync returned: flagged, as on stdout.
    const naming =
      'id: 8\nevent: session_update\ndata: {"id":8,"v":1,"type":"session_update","_meta":{"mend":{"messages":[{"type":"assistant","uuid":"b"}]}}}\n\n';
    expect(await check(naming, true)).toContain('acknowledged_record_lost');
    expect(await check(naming, false)).toEqual([]);
    // After the fsync returned, any message acknowledges what was written before it (the strict rule).
    expect(await check(unrelated, false)).toEqual([]);
  });
});
