/**
 * Plan checkpoints (src/runtime/checkpoint) against their oracle, the plain pass: a store
 * without checkpoints reads the whole log. Generated sessions are read once (which writes
 * a checkpoint), then changed every way a log can change between two reads (appended to
 * by mend, by another writer, by another session, a repeated line, garbage, a torn line;
 * truncated, a byte edited, lines reordered, the file replaced or restored; the checkpoint
 * torn, garbled or of another version) and read again, twice: each plan must equal the
 * plain pass's. The checkpoint must also actually be used: most appends are read through it.
 */
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { settledCheckpointWrites } from '../../src/runtime/checkpoint/plan-checkpoints.js';
import { readCheckpointHeader } from '../../src/runtime/checkpoint/checkpoint-file.js';
import type { LogFacts } from '../../src/runtime/checkpoint/plan-checkpoints.js';
import { loadPlanAndFacts, loadPlanHead, refreshPlanCheckpoint } from '../../src/runtime/load-and-plan.js';
import { readSessionLog } from '../../src/session/log-reader.js';
import { SessionRuntime, settledBackgroundCheckpoints } from '../../src/runtime/session-runtime.js';
import type { ChatRecord } from '../../src/session/records.js';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import type { ProjectScope } from '../../src/store/session-store.js';
import { garbageLineArb, sessionRecordsArb, sessionTurnsArb } from '../support/arbitraries.js';
import { defaultSettings, runtimeFixture } from '../support/runtime.js';

const SESSION = '11111111-2222-4333-8444-555555555555';
const OTHER = '99999999-2222-4333-8444-555555555555';
const root = mkdtempSync(join(tmpdir(), 'mend-checkpoints-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const scope: ProjectScope = { projectRoot: root, cwd: root };
const notes: string[] = [];
const home = join(root, 'home');
const withCheckpoints = new JsonlSessionStore({ home, checkpoints: { note: (m) => notes.push(m), minBytes: 0 } });
const plain = new JsonlSessionStore({ home: join(root, 'plain-home') });
const writer = { store: 'jsonl' as const, host: 'devbox', pid: 4242, since: '2026-01-01T00:00:00.000Z' };

let counter = 0;
const line = (record: unknown): string => `${JSON.stringify(record)}\n`;

/** Well-behaved turns of the session (test/support/arbitraries.ts). */
function turnsArb(prefix: string, sessionId = SESSION, version = 'mend/0.1.0'): fc.Arbitrary<(parent: string | null) => ChatRecord[]> {
  return sessionTurnsArb(prefix, { sessionId, version });
}

const baseArb = fc.oneof({ weight: 3, arbitrary: turnsArb('b').map((make) => make(null)) }, { weight: 1, arbitrary: sessionRecordsArb });

type Mutation =
  | { type: 'append_turns'; make: (parent: string | null) => ChatRecord[] }
  | { type: 'append_peer'; make: (parent: string | null) => ChatRecord[] }
  | { type: 'append_other_session'; make: (parent: string | null) => ChatRecord[] }
  | { type: 'append_branch'; make: (parent: string | null) => ChatRecord[]; at: number }
  | { type: 'append_records'; records: ChatRecord[] }
  | { type: 'append_repeat'; at: number }
  | { type: 'append_garbage'; garbage: Buffer; newline: boolean }
  | { type: 'truncate'; at: number }
  | { type: 'edit_byte'; at: number; value: number }
  | { type: 'reorder'; seed: number }
  | { type: 'replace'; records: ChatRecord[] }
  | { type: 'replace_same' }
  | { type: 'restore_backup' }
  | { type: 'checkpoint_torn'; at: number }
  | { type: 'checkpoint_garbled'; at: number }
  | { type: 'checkpoint_version' };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: turnsArb('a').map((make) => ({ type: 'append_turns' as const, make })) },
  { weight: 2, arbitrary: turnsArb('q', SESSION, '0.24.4').map((make) => ({ type: 'append_peer' as const, make })) },
  { weight: 1, arbitrary: turnsArb('o', OTHER).map((make) => ({ type: 'append_other_session' as const, make })) },
  { weight: 2, arbitrary: fc.tuple(turnsArb('x'), fc.nat()).map(([make, at]) => ({ type: 'append_branch' as const, make, at })) },
  { weight: 2, arbitrary: sessionRecordsArb.map((records) => ({ type: 'append_records' as const, records })) },
  { weight: 2, arbitrary: fc.nat().map((at) => ({ type: 'append_repeat' as const, at })) },
  { weight: 1, arbitrary: fc.tuple(garbageLineArb, fc.boolean()).map(([garbage, newline]) => ({ type: 'append_garbage' as const, garbage, newline })) },
  { weight: 1, arbitrary: fc.nat().map((at) => ({ type: 'truncate' as const, at })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.nat({ max: 255 })).map(([at, value]) => ({ type: 'edit_byte' as const, at, value })) },
  { weight: 1, arbitrary: fc.nat().map((seed) => ({ type: 'reorder' as const, seed })) },
  { weight: 1, arbitrary: sessionRecordsArb.map((records) => ({ type: 'replace' as const, records })) },
  { weight: 1, arbitrary: fc.constant({ type: 'replace_same' as const }) },
  { weight: 1, arbitrary: fc.constant({ type: 'restore_backup' as const }) },
  { weight: 1, arbitrary: fc.nat().map((at) => ({ type: 'checkpoint_torn' as const, at })) },
  { weight: 1, arbitrary: fc.nat().map((at) => ({ type: 'checkpoint_garbled' as const, at })) },
  { weight: 1, arbitrary: fc.constant({ type: 'checkpoint_version' as const }) },
);

/** The last main record's uuid of the log (what an append continues), or null. */
function lastUuid(bytes: Buffer): string | null {
  const lines = bytes.toString('utf8').split('\n').reverse();
  for (const text of lines) {
    try {
      const value = JSON.parse(text) as { uuid?: unknown; isSidechain?: unknown };
      if (typeof value.uuid === 'string' && value.isSidechain !== true) return value.uuid;
    } catch {
      // not a record
    }
  }
  return null;
}

function uuidsOf(bytes: Buffer): string[] {
  const out: string[] = [];
  for (const text of bytes.toString('utf8').split('\n')) {
    try {
      const value = JSON.parse(text) as { uuid?: unknown };
      if (typeof value.uuid === 'string') out.push(value.uuid);
    } catch {
      // not a record
    }
  }
  return out;
}

function checkpointFile(): string {
  const dir = join(home, 'cache', 'checkpoints');
  const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.ckpt')) : [];
  return names.length === 1 ? join(dir, names[0]!) : '';
}

function apply(path: string, mutation: Mutation, backup: Buffer): void {
  const bytes = readFileSync(path);
  switch (mutation.type) {
    case 'append_turns':
    case 'append_peer':
    case 'append_other_session':
      appendFileSync(path, mutation.make(lastUuid(bytes)).map(line).join(''));
      return;
    case 'append_branch': {
      const uuids = uuidsOf(bytes);
      appendFileSync(
        path,
        mutation
          .make(uuids.length === 0 ? null : uuids[mutation.at % uuids.length]!)
          .map(line)
          .join(''),
      );
      return;
    }
    case 'append_records':
      appendFileSync(
        path,
        mutation.records
          .map((r) => line({ ...r, uuid: `${r.uuid}n${counter}`, parentUuid: r.parentUuid === null ? lastUuid(bytes) : `${r.parentUuid}n${counter}` }))
          .join(''),
      );
      return;
    case 'append_repeat': {
      const lines = bytes
        .toString('utf8')
        .split('\n')
        .filter((l) => l.length > 0);
      if (lines.length > 0) appendFileSync(path, `${lines[mutation.at % lines.length]}\n`);
      return;
    }
    case 'append_garbage':
      appendFileSync(path, mutation.newline ? Buffer.concat([mutation.garbage, Buffer.from('\n')]) : mutation.garbage);
      return;
    case 'truncate':
      truncateSync(path, bytes.length === 0 ? 0 : mutation.at % bytes.length);
      return;
    case 'edit_byte': {
      if (bytes.length === 0) return;
      const edited = Buffer.from(bytes);
      edited[mutation.at % bytes.length] = mutation.value;
      writeFileSync(path, edited);
      return;
    }
    case 'reorder': {
      const lines = bytes.toString('utf8').split('\n');
      let seed = mutation.seed;
      for (let i = lines.length - 1; i > 0; i--) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        const j = seed % (i + 1);
        [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      }
      writeFileSync(path, lines.join('\n'));
      return;
    }
    case 'replace':
      writeFileSync(`${path}.new`, mutation.records.map(line).join(''));
      renameSync(`${path}.new`, path);
      return;
    case 'replace_same':
      copyFileSync(path, `${path}.new`);
      renameSync(`${path}.new`, path);
      return;
    case 'restore_backup':
      writeFileSync(path, backup);
      return;
    case 'checkpoint_torn':
    case 'checkpoint_garbled':
    case 'checkpoint_version': {
      const file = checkpointFile();
      if (file === '') return;
      const ckpt = readFileSync(file);
      if (ckpt.length === 0) return;
      if (mutation.type === 'checkpoint_torn') writeFileSync(file, ckpt.subarray(0, mutation.at % ckpt.length));
      else if (mutation.type === 'checkpoint_version') {
        ckpt.writeUInt32LE(99, 8);
        writeFileSync(file, ckpt);
      } else {
        const at = mutation.at % ckpt.length;
        ckpt[at] = ckpt[at]! ^ 0x5a;
        writeFileSync(file, ckpt);
      }
      return;
    }
  }
}

/** What a listing shows of a log, as the store's own listing reads it (every record, JsonlSessionStore.list). */
async function referenceFacts(path: string): Promise<LogFacts> {
  const read = await readSessionLog(path, path.endsWith(`${SESSION}.jsonl`) ? { fileSessionId: SESSION } : {});
  const firstUser = read.records.find((r) => r.record.type === 'user')?.record;
  const text = firstUser?.type === 'user' ? firstUser.message.parts.find((p) => typeof p.text === 'string')?.text : undefined;
  return {
    records: read.records.length,
    started: read.records[0]?.record.timestamp ?? null,
    lastUpdate: read.records.at(-1)?.record.timestamp ?? null,
    firstPrompt: text === undefined ? null : text.slice(0, 200),
  };
}

async function planBoth(path: string, allowAutoContinue: boolean, activeWriter: typeof writer | null): Promise<void> {
  const expected = await loadPlanHead(plain, await plain.resolve(scope, path), allowAutoContinue, activeWriter);
  const got = await loadPlanAndFacts(withCheckpoints, await withCheckpoints.resolve(scope, path), allowAutoContinue, activeWriter);
  await settledCheckpointWrites();
  expect(JSON.parse(JSON.stringify(got.planned))).toEqual(JSON.parse(JSON.stringify(expected)));
  expect(got.facts).toEqual(await referenceFacts(path));
}

describe('plan checkpoints', () => {
  it("give the plain pass's plan however the log and the checkpoint change between reads", async () => {
    let warmReads = 0;
    let appendReads = 0;
    await fc.assert(
      fc.asyncProperty(
        baseArb,
        fc.array(mutationArb, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        async (base, mutations, named, allowAutoContinue, live) => {
          counter++;
          rmSync(home, { recursive: true, force: true });
          const path = join(root, named ? `${SESSION}.jsonl` : `log-${counter}.jsonl`);
          const bytes = Buffer.from(base.map(line).join(''));
          writeFileSync(path, bytes);
          const activeWriter = live ? writer : null;
          await planBoth(path, allowAutoContinue, activeWriter);
          for (const mutation of mutations) {
            apply(path, mutation, bytes);
            notes.length = 0;
            const had = checkpointFile() !== '';
            await planBoth(path, allowAutoContinue, activeWriter);
            if (had && mutation.type === 'append_turns') {
              appendReads++;
              if (!notes.some((n) => n.includes('not used'))) warmReads++;
            }
            // Read again: through the checkpoint the read above left (or none).
            await planBoth(path, allowAutoContinue, activeWriter);
          }
          rmSync(path, { force: true });
        },
      ),
      { numRuns: Number(process.env.CHECKPOINT_RUNS ?? 250) },
    );
    // The checkpoint is used: most of mend's own appends are read through it.
    expect(appendReads).toBeGreaterThan(20);
    expect(warmReads).toBeGreaterThan(appendReads / 2);
  }, 240_000);

  it('model records in a row are one entry: a checkpoint never cuts between them (a dangling call before the cut stays answered)', async () => {
    rmSync(home, { recursive: true, force: true });
    const path = join(root, `${SESSION}.jsonl`);
    const at = (s: number) => `2026-01-01T00:00:0${s}.000Z`;
    const base = { sessionId: SESSION, version: 'mend/0.1.0' };
    const call = (id: string | undefined) => ({ functionCall: { ...(id ? { id } : {}), name: 'run_shell_command', args: { command: '' } } });
    writeFileSync(
      path,
      [
        { ...base, uuid: 'r0', parentUuid: null, timestamp: at(0), type: 'assistant', message: { role: 'model', parts: [call('c1')] } },
        { ...base, uuid: 'r1', parentUuid: 'r0', timestamp: at(1), type: 'assistant', message: { role: 'model', parts: [call(undefined)] } },
      ]
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    );
    // The first read writes the checkpoint; the prompt appended after it is read through it.
    await planBoth(path, false, null);
    appendFileSync(
      path,
      `${JSON.stringify({ ...base, uuid: 'a0', parentUuid: 'r1', timestamp: at(2), type: 'user', message: { role: 'user', parts: [{ text: 'next' }] } })}\n`,
    );
    await planBoth(path, false, null);
    const plan = await loadPlanHead(withCheckpoints, await withCheckpoints.resolve(scope, path), false, null);
    expect(plan.plan.continuation?.syntheticCallIds).toContain('c1');
  });

  it('a window record that supplies the parent the prefix lacked is not joined (the walk now goes on, here into a cycle)', async () => {
    rmSync(home, { recursive: true, force: true });
    const path = join(root, `${SESSION}.jsonl`);
    const base = { sessionId: SESSION, version: 'mend/0.1.0', timestamp: '2026-01-01T00:00:00.000Z' };
    const call = { functionCall: { id: 'c1', name: 'read_file', args: { p: 'x' } } };
    writeFileSync(
      path,
      [
        '{"uuid":"a0", torn\n',
        line({ ...base, uuid: 'a1', parentUuid: 'a0', type: 'assistant', message: { role: 'model', parts: [call] } }),
        line({
          ...base,
          uuid: 'a2',
          parentUuid: 'a1',
          type: 'tool_result',
          message: { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'read_file', response: { output: 'x' } } }] },
        }),
        line({ ...base, uuid: 'a3', parentUuid: 'a2', type: 'assistant', message: { role: 'model', parts: [{ text: 'done' }] } }),
      ].join(''),
    );
    // The first read leaves a checkpoint whose prefix ends at a gap (a1's parent a0 is missing).
    await planBoth(path, false, null);
    expect(checkpointFile()).not.toBe('');
    appendFileSync(path, line({ ...base, uuid: 'a0', parentUuid: 'a3', type: 'user', message: { role: 'user', parts: [{ text: 'again' }] } }));
    notes.length = 0;
    await planBoth(path, false, null);
    expect(notes.some((n) => n.includes('supplies a parent the prefix lacked'))).toBe(true);
    const plan = await loadPlanHead(plain, await plain.resolve(scope, path), false, null);
    expect(plan.loaded.diagnostics.map((d) => d.code)).toContain('parent_cycle');
  });

  it('a model entry the repair empties (a call without an id) is never the cut: the prompts on both sides stay one entry', async () => {
    rmSync(home, { recursive: true, force: true });
    const path = join(root, `${SESSION}.jsonl`);
    const base = { sessionId: SESSION, version: 'mend/0.1.0', timestamp: '2026-01-01T00:00:00.000Z' };
    writeFileSync(
      path,
      [
        line({
          ...base,
          uuid: 'r0',
          parentUuid: null,
          type: 'user',
          message: { role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
        }),
        line({
          ...base,
          uuid: 'r1',
          parentUuid: 'r0',
          type: 'assistant',
          message: { role: 'model', parts: [{ functionCall: { id: '', name: 'run_shell_command', args: { command: '' } } }] },
        }),
      ].join(''),
    );
    await planBoth(path, false, null);
    appendFileSync(path, line({ ...base, uuid: 'a0', parentUuid: 'r1', type: 'user', message: { role: 'user', parts: [{ text: '0' }] } }));
    await planBoth(path, false, null);
    const plan = await loadPlanHead(withCheckpoints, await withCheckpoints.resolve(scope, path), false, null);
    expect(plan.plan.continuation?.parts).toHaveLength(2);
  });

  it('a runtime refreshes the checkpoint after each turn, off the turn; the next resume reads through it', async () => {
    const fx = runtimeFixture([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    const runtimeNotes: string[] = [];
    const store = new JsonlSessionStore({ home: fx.home, checkpoints: { note: (m) => runtimeNotes.push(m), minBytes: 0 } });
    fx.deps.store = store;
    const runtime = await SessionRuntime.open(fx.deps, { target: { type: 'new' }, access: 'write', settings: defaultSettings });
    for (const text of ['a', 'b', 'c']) expect(await runtime.prompt([{ text }])).toMatchObject({ status: 'success' });
    await runtime.close();
    const log = join(fx.chats, `${runtime.sessionId}.jsonl`);
    const slot = store.checkpointSlot(await store.resolve(fx.deps.scope, log))!;
    const read = await readCheckpointHeader(slot.cacheFile);
    // The checkpoint describes the log as the last turn left it.
    expect('header' in read && read.header.log.bytes).toBe(statSync(log).size);
    const ref = await store.resolve(fx.deps.scope, log);
    const got = await loadPlanHead(store, ref, false, null);
    const expected = await loadPlanHead(plain, await plain.resolve(fx.deps.scope, log), false, null);
    expect(plainValue(got)).toEqual(plainValue(expected));
    expect(runtimeNotes).toEqual([]);
  });

  it("a close that leaves the last refresh in the background (the daemon's) releases the lease; the refresh is settled later", async () => {
    const fx = runtimeFixture([{ text: 'one' }, { text: 'two' }]);
    const runtimeNotes: string[] = [];
    const store = new JsonlSessionStore({ home: fx.home, checkpoints: { note: (m) => runtimeNotes.push(m), minBytes: 0 } });
    fx.deps.store = store;
    const runtime = await SessionRuntime.open(fx.deps, { target: { type: 'new' }, access: 'write', settings: defaultSettings });
    for (const text of ['a', 'b']) expect(await runtime.prompt([{ text }])).toMatchObject({ status: 'success' });
    await runtime.close({ checkpoint: 'background' });
    const log = join(fx.chats, `${runtime.sessionId}.jsonl`);
    const ref = await store.resolve(fx.deps.scope, log);
    // The lease is free as soon as the close answered.
    expect(await store.activeWriter(ref)).toBeNull();
    await settledBackgroundCheckpoints();
    const read = await readCheckpointHeader(store.checkpointSlot(ref)!.cacheFile);
    expect('header' in read && read.header.log.bytes).toBe(statSync(log).size);
    expect(runtimeNotes).toEqual([]);
  });
});

describe('plan checkpoints of short logs', () => {
  it('a log shorter than minBytes is read whole and gets no checkpoint; once it is longer, a read or a refresh writes one', async () => {
    const minBytes = 32 * 1024;
    const shortHome = join(root, 'short-home');
    rmSync(shortHome, { recursive: true, force: true });
    const store = new JsonlSessionStore({ home: shortHome, checkpoints: { minBytes } });
    const path = join(root, `${SESSION}.jsonl`);
    const records = (await fc.sample(turnsArb('s'), { seed: 7, numRuns: 1 }))[0]!(null);
    writeFileSync(path, records.map(line).join(''));
    expect(statSync(path).size).toBeLessThan(minBytes);
    const ref = await store.resolve(scope, path);
    const cacheFile = store.checkpointSlot(ref)!.cacheFile;
    const expectSame = async (): Promise<void> =>
      expect(plainValue(await loadPlanAndFacts(store, ref, false, null))).toEqual(
        plainValue({ planned: await loadPlanHead(plain, await plain.resolve(scope, path), false, null), facts: await referenceFacts(path) }),
      );
    await expectSame();
    await refreshPlanCheckpoint(store, ref);
    await settledCheckpointWrites();
    expect(existsSync(cacheFile)).toBe(false);
    // Grown past minBytes: the next read writes the checkpoint, and the read after goes through it.
    let parent = lastUuid(readFileSync(path));
    while (statSync(path).size < minBytes) {
      const more = (await fc.sample(turnsArb(`g${statSync(path).size}-`), { seed: statSync(path).size, numRuns: 1 }))[0]!(parent);
      appendFileSync(path, more.map(line).join(''));
      parent = lastUuid(readFileSync(path));
    }
    await expectSame();
    await settledCheckpointWrites();
    expect(existsSync(cacheFile)).toBe(true);
    await expectSame();
    rmSync(path, { force: true });
  });
});

function plainValue(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
