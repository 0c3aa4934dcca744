/**
 * The store contract suite: what every SessionStore must do, run against each
 * store by its own test file with a factory and a seed hook. The crash corpus
 * read through the store must give the very plan the core builds from the
 * fixture file; cases a store cannot hold (torn or garbage lines for a database)
 * are named as not applicable, and the suite checks that the store really
 * refuses them rather than taking the list's word for it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isMendError } from '../../src/errors.js';
import { buildPlanForSession } from '../../src/recovery/index.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { readSessionLog } from '../../src/session/log-reader.js';
import { indexRecords } from '../../src/session/outline/history-reader.js';
import { planFromOutline } from '../../src/runtime/outline-plan.js';
import type { ChatRecord } from '../../src/session/records.js';
import { exportSession, importSession } from '../../src/store/session-transfer.js';
import type { ProjectScope, SessionRef, SessionStore } from '../../src/store/session-store.js';
import { CORPUS_DIR, listCorpus } from './corpus.js';
import { createWithContract } from './store-contract-create.js';
import { collect, fixtureLines, OTHER, planThroughCore, scopeFor, sessionIdOf, WRITER } from './store-fixtures.js';
import { record } from './store-records.js';

export { record };

export interface StoreContractOptions {
  name: string;
  /** A fresh, empty store of this kind, independent of every other one it returned (the suite closes it). */
  open(): Promise<SessionStore>;
  /**
   * Puts a session's lines into the store as they are (for JSONL: the file's
   * bytes; for a database: one row per line). `lines` is the file split on '\n',
   * so a file ending with a newline ends with ''. Throws when the store cannot hold them.
   */
  seed(store: SessionStore, scope: ProjectScope, sessionId: string, lines: string[]): Promise<SessionRef>;
  /** Corpus cases this store cannot hold, by name, with the reason. */
  notApplicable?: Record<string, string>;
}

export function storeContract(options: StoreContractOptions): void {
  // Most tests share one store: they use fresh project scopes and session ids (the
  // corpus cases' ids are distinct), which keeps a database store to a few
  // databases instead of one per test. Tests that need an empty store open one.
  let sharedStore: Promise<SessionStore> | null = null;
  const shared = (): Promise<SessionStore> => (sharedStore ??= options.open());
  afterAll(async () => {
    await (await sharedStore)?.close();
  });
  const opened: SessionStore[] = [];
  const open = async (): Promise<SessionStore> => {
    const store = await options.open();
    opened.push(store);
    return store;
  };
  // Closed after each test: a database store's pool would otherwise keep idle
  // connections open while other test files race 50 writers on the same server.
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  const notApplicable = options.notApplicable ?? {};

  describe(`store contract: ${options.name}`, () => {
    describe('crash corpus gives the core plan', () => {
      const cases = listCorpus();

      it('lists only real corpus cases as not applicable', () => {
        const names = new Set(cases.map((c) => c.name));
        for (const name of Object.keys(notApplicable)) expect(names.has(name), name).toBe(true);
      });

      for (const c of cases) {
        const why = notApplicable[c.name];
        if (why !== undefined) {
          it(`${c.name}: not applicable (${why}); the store refuses it`, async () => {
            const store = await shared();
            const lines = fixtureLines(c.name);
            await expect(
              (async () => {
                const ref = await options.seed(store, scopeFor(c.name), sessionIdOf(lines), lines);
                await store.read(ref);
              })(),
            ).rejects.toThrow();
          });
          continue;
        }
        it(c.name, async () => {
          const store = await shared();
          const lines = fixtureLines(c.name);
          const ref = await options.seed(store, scopeFor(c.name), sessionIdOf(lines), lines);
          const core = await planThroughCore(c.name);
          const read = await store.read(ref);
          expect(buildPlanForSession(buildConversation(read))).toEqual(core.plan);
          // The outline the store plans a recovery line from: the same plan, the same records.
          const outline = await store.readOutline(ref);
          expect(outline.indexEntries()).toEqual(indexRecords(core.read).entries);
          const { apiHistory: _api, originalApiHistory: _original, ...head } = core.plan;
          expect(planFromOutline(outline, {}, {}, null).plan).toEqual(head);
        });
      }
    });

    it('property: shuffled and duplicated corpus records give the core plan', { timeout: 120_000 }, async () => {
      const store = await shared();
      const holdable = listCorpus()
        .filter((c) => !(c.name in notApplicable))
        .map((c) => fixtureLines(c.name).filter((l) => l !== ''))
        .filter((lines) => lines.length > 0);
      const dir = mkdtempSync(join(tmpdir(), 'mend-contract-prop-'));
      const sessionArb = fc
        .constantFrom(...holdable)
        .chain((lines) =>
          fc.tuple(
            fc.shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length }),
            fc.array(fc.nat({ max: lines.length - 1 }), { maxLength: 3 }),
          ),
        );
      try {
        await fc.assert(
          fc.asyncProperty(sessionArb, async ([shuffled, dups]) => {
            // A fresh session id per run (same length, so only the id changes): a store holds each id once.
            const oldId = sessionIdOf(shuffled);
            const id = randomUUID();
            const lines = [...shuffled, ...dups.map((i) => shuffled[i]!)].map((l) => l.replaceAll(oldId, id));
            const file = join(dir, `${id}.jsonl`);
            writeFileSync(file, lines.join('\n') + '\n');
            // As loadSession reads a path: the file is named for the session, whose id wins over a majority.
            const core = await readSessionLog(file, { fileSessionId: id });
            const ref = await options.seed(store, scopeFor('prop'), id, [...lines, '']);
            const read = await store.read(ref);
            expect(buildPlanForSession(buildConversation(read))).toEqual(buildPlanForSession(buildConversation(core)));
            expect((await store.readOutline(ref)).indexEntries()).toEqual(indexRecords(core).entries);
          }),
          { numRuns: 25 },
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('an empty store has nothing and writes nothing when asked', async () => {
      const store = await open();
      const scope = scopeFor('empty');
      const ref = await store.newSession(scope, randomUUID());
      expect(await store.list(scope)).toEqual([]);
      expect(await store.latest(scope)).toBeNull();
      expect(await store.exists(ref)).toBe(false);
      expect(await store.activeWriter(ref)).toBeNull();
      await expect(store.read(ref)).rejects.toSatisfy((e) => isMendError(e, 'session_not_found'));
    });

    it('reads appended records back in append order, exactly as written', async () => {
      const store = await shared();
      const scope = scopeFor('order');
      const id = randomUUID();
      const ref = await store.newSession(scope, id);
      const lease = await store.acquire(ref, WRITER);
      const written: ChatRecord[] = [];
      let parent: string | null = null;
      for (let n = 1; n <= 25; n++) {
        const r = record(id, n, parent, new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), `p${n} ü ✓ "quoted"`);
        await lease.append(r, { durable: n % 5 === 0 });
        written.push(r);
        parent = r.uuid;
      }
      await lease.release();
      const read = await store.read(ref);
      expect(read.records.map((r) => r.record)).toEqual(written);
      expect(read.records.map((r) => r.line)).toEqual(written.map((_, i) => i + 1));
      expect(read.diagnostics).toEqual([]);
      if (store.readLines) {
        const lines: string[] = [];
        for await (const line of store.readLines(ref)) if (line !== '') lines.push(line);
        expect(lines).toEqual(written.map((r) => JSON.stringify(r)));
      }
      expect(await store.exists(ref)).toBe(true);
      await expect(store.newSession(scope, id)).rejects.toSatisfy((e) => isMendError(e, 'session_exists'));
    });

    it('a second writer is refused with session_locked naming the holder; release lets it in', async () => {
      const store = await shared();
      const scope = scopeFor('lease');
      const id = randomUUID();
      const ref = await store.newSession(scope, id);
      const first = await store.acquire(ref, WRITER);
      await first.append(record(id, 1, null, '2026-01-01T00:00:01.000Z'), { durable: true });
      const holder = await store.activeWriter(ref);
      expect(holder).toMatchObject({ store: store.kind, host: WRITER.host, pid: WRITER.pid });
      const refused = await store.acquire(ref, OTHER).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isMendError(refused, 'session_locked')).toBe(true);
      expect((refused as { details?: unknown }).details).toMatchObject({ host: WRITER.host, pid: WRITER.pid });

      await first.release();
      await first.release(); // idempotent
      await expect(first.append(record(id, 9, null, '2026-01-01T00:00:09.000Z'), { durable: false })).rejects.toThrow();
      expect(await store.activeWriter(ref)).toBeNull();

      const second = await store.acquire(ref, OTHER);
      expect(await store.activeWriter(ref)).toMatchObject({ host: OTHER.host, pid: OTHER.pid });
      await second.append(record(id, 2, `${id.slice(0, 8)}-u1`, '2026-01-01T00:00:02.000Z'), { durable: true });
      await second.release();
      const read = await store.read(ref);
      expect(read.records.map((r) => r.record.uuid)).toEqual([`${id.slice(0, 8)}-u1`, `${id.slice(0, 8)}-u2`]);
    });

    it('lists the sessions of a project, newest first; latest is the newest; other projects see none', async () => {
      const store = await shared();
      const scope = scopeFor('list');
      const older = randomUUID();
      const newer = randomUUID();
      for (const [id, day, text] of [
        [older, 1, 'the older session'],
        [newer, 2, 'the newer session'],
      ] as const) {
        const ref = await store.newSession(scope, id);
        const lease = await store.acquire(ref, WRITER);
        await lease.append(record(id, 1, null, `2026-02-0${day}T10:00:00.000Z`, text), { durable: false });
        await lease.append(record(id, 2, `${id.slice(0, 8)}-u1`, `2026-02-0${day}T11:00:00.000Z`, 'second'), { durable: true });
        await lease.release();
      }
      const listing = await store.list(scope);
      expect(listing.map((l) => [l.ref.sessionId, l.records, l.firstPrompt, l.started, l.lastUpdate])).toEqual([
        [newer, 2, 'the newer session', '2026-02-02T10:00:00.000Z', '2026-02-02T11:00:00.000Z'],
        [older, 2, 'the older session', '2026-02-01T10:00:00.000Z', '2026-02-01T11:00:00.000Z'],
      ]);
      expect(listing.every((l) => l.ref.store === store.kind && l.error === undefined)).toBe(true);
      expect((await store.latest(scope))?.sessionId).toBe(newer);
      const resolved = await store.resolve(scope, older);
      expect(resolved.sessionId).toBe(older);
      expect((await store.read(resolved)).records).toHaveLength(2);
      const elsewhere = scopeFor('list-other');
      expect(await store.list(elsewhere)).toEqual([]);
      expect(await store.latest(elsewhere)).toBeNull();
    });

    createWithContract(shared);

    it('refuses a malformed resume target before any I/O', async () => {
      const store = await shared();
      await expect(store.resolve(scopeFor('resolve'), '../../etc/passwd')).rejects.toSatisfy((e) => isMendError(e, 'invalid_resume_target'));
    });

    it('exports byte-identical ndjson and imports it into a fresh store with the same plan', async () => {
      const caseName = 'parallel-calls-one-of-three-answered';
      const source = await open();
      const lines = fixtureLines(caseName);
      const ref = await options.seed(source, scopeFor('export'), sessionIdOf(lines), lines);
      const exported = await collect((sink) => exportSession(source, ref, sink));
      expect(exported.equals(readFileSync(join(CORPUS_DIR, caseName, 'session.jsonl')))).toBe(true);

      const target = await open();
      const scope = scopeFor('import');
      const imported = await importSession(target, scope, Readable.from([exported]), { who: WRITER });
      expect(imported.records).toBe(lines.filter((l) => l !== '').length);
      const back = await collect((sink) => exportSession(target, imported.ref, sink));
      expect(back.equals(exported)).toBe(true);
      const core = await planThroughCore(caseName);
      expect(buildPlanForSession(buildConversation(await target.read(imported.ref)))).toEqual(core.plan);
      expect(await target.activeWriter(imported.ref)).toBeNull();
    });

    it('an import with a bad line names it by its number and writes nothing', async () => {
      const store = await open();
      const scope = scopeFor('bad-import');
      const lines = fixtureLines('clean-tool-round-trip').filter((l) => l !== '');
      const input = [lines[0], lines[1], '', lines[2], '{"torn": ', lines[3]].join('\n') + '\n';
      const failure = await importSession(store, scope, Readable.from([input]), { who: WRITER }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isMendError(failure, 'malformed_line')).toBe(true);
      expect((failure as { details?: { line?: number } }).details?.line).toBe(5);
      expect(await store.list(scope)).toEqual([]);
      const ref = await store.newSession(scope, sessionIdOf(lines));
      expect(await store.exists(ref)).toBe(false);

      const foreign = JSON.stringify({ ...JSON.parse(lines[1]!), sessionId: randomUUID() });
      const mixed = [lines[0], foreign].join('\n') + '\n';
      const refused = await importSession(store, scope, Readable.from([mixed]), { who: WRITER }).then(
        () => null,
        (e: unknown) => e,
      );
      expect((refused as { details?: { line?: number } }).details?.line).toBe(2);
      expect(await store.exists(ref)).toBe(false);
    });
  });
}
