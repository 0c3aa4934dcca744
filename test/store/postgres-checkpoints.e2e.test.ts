/**
 * Plan checkpoints of PostgreSQL sessions (a row in mend.plan_checkpoints) against their
 * oracle, the plain pass of a store without checkpoints, on the real server. Generated
 * sessions are read once (which writes the checkpoint row), then changed every way rows can
 * change between two reads: appended to by mend, by another writer, by another session, a
 * repeated row, garbage and blank rows; rows edited, deleted, swapped, the tail cut off, the
 * session's last seq lowered, the session recreated (other records, the same ones, a backup),
 * the table truncated, a row at a hashed seq edited with the change counter's triggers off;
 * the checkpoint row deleted, torn, garbled, of another version, its seqs, change count, CRC
 * or hash changed, an older checkpoint row restored. Each is read twice: every plan and
 * listing fact must equal the plain pass's, and most appends are read through the checkpoint.
 * Also: a read-only user reads through checkpoints it cannot write, a database at schema
 * version 1 is read as before (nothing created), MEND_CHECKPOINTS=0 gives no slot, and a
 * runtime's refresh after a turn leaves a checkpoint the next resume uses.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { settledCheckpointWrites, type LogFacts } from '../../src/runtime/checkpoint/plan-checkpoints.js';
import { loadPlanAndFacts, loadPlanHead, refreshPlanCheckpoint } from '../../src/runtime/load-and-plan.js';
import { projectKey } from '../../src/session/session-ids.js';
import type { ChatRecord } from '../../src/session/records.js';
import { openStore } from '../../src/store/open-store.js';
import { MIGRATIONS } from '../../src/store/postgres/pg-schema.js';
import { PostgresSessionStore } from '../../src/store/postgres/pg-store.js';
import type { ProjectScope, SessionRef, SessionStore } from '../../src/store/session-store.js';
import { sessionRecordsArb, sessionTurnsArb } from '../support/arbitraries.js';
import { SessionRuntime } from '../../src/runtime/session-runtime.js';
import { defaultSettings, runtimeFixture } from '../support/runtime.js';
import { adminQuery, databasesForFile, describePostgres, type TestDatabase } from '../support/postgres.js';

const SESSION = '11111111-2222-4333-8444-555555555555';
const OTHER = '99999999-2222-4333-8444-555555555555';
const scope: ProjectScope = { projectRoot: '/work/pgckpt', cwd: '/work/pgckpt' };
const writer = { store: 'postgres' as const, host: 'devbox', pid: 4242, since: '2026-01-01T00:00:00.000Z' };
const newDatabase = databasesForFile('ckpt');

let counter = 0;

/** Well-behaved turns of the session (test/support/arbitraries.ts), tagged with the run that made them. */
function turnsArb(prefix: string, sessionId = SESSION, version = 'mend/0.1.0'): fc.Arbitrary<(parent: string | null) => ChatRecord[]> {
  return sessionTurnsArb(prefix, { sessionId, version, run: () => `${counter}-`, noNul: true });
}

const baseArb = fc.oneof({ weight: 3, arbitrary: turnsArb('b').map((make) => make(null)) }, { weight: 1, arbitrary: sessionRecordsArb });

/** A row that is no record: JSON all the same (record_json is generated from it), never a NUL. */
const garbageRowArb = fc.oneof(
  fc.constantFrom('null', '[]', '{}', '1', ' {"type":"user"} ', '{"uuid":"u1"}', '"text"', '{"uuid":"r0","type":"assistant"}'),
  fc
    .jsonValue({ maxDepth: 2 })
    .map((v) => JSON.stringify(v) ?? 'null')
    .filter((t) => !t.includes('\\u0000')),
);

type Mutation =
  | { type: 'append_turns' | 'append_peer' | 'append_other_session'; make: (parent: string | null) => ChatRecord[] }
  | { type: 'append_branch'; make: (parent: string | null) => ChatRecord[]; at: number }
  | { type: 'append_records'; records: ChatRecord[] }
  | { type: 'append_repeat'; at: number }
  | { type: 'append_garbage'; text: string }
  | { type: 'edit_row'; at: number; text: string }
  | { type: 'edit_hashed_untracked'; at: number; head: boolean }
  | { type: 'delete_row'; at: number }
  | { type: 'swap_rows'; at: number; with: number }
  | { type: 'cut_tail'; at: number }
  | { type: 'lower_last_seq'; at: number }
  | { type: 'replace'; records: ChatRecord[] }
  | { type: 'replace_same' | 'restore_backup' | 'truncate_table' }
  | { type: 'checkpoint_delete' | 'checkpoint_version' | 'checkpoint_restore_first' }
  | { type: 'checkpoint_torn' | 'checkpoint_garbled' | 'checkpoint_bloom'; at: number }
  | { type: 'checkpoint_column'; column: 'cut_seq' | 'covered_seq' | 'changes' | 'crc' | 'bloom_crc' | 'head_hash' | 'tail_hash'; delta: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 8, arbitrary: turnsArb('a').map((make) => ({ type: 'append_turns' as const, make })) },
  { weight: 2, arbitrary: turnsArb('q', SESSION, '0.24.4').map((make) => ({ type: 'append_peer' as const, make })) },
  { weight: 1, arbitrary: turnsArb('o', OTHER).map((make) => ({ type: 'append_other_session' as const, make })) },
  { weight: 2, arbitrary: fc.tuple(turnsArb('x'), fc.nat()).map(([make, at]) => ({ type: 'append_branch' as const, make, at })) },
  { weight: 2, arbitrary: sessionRecordsArb.map((records) => ({ type: 'append_records' as const, records })) },
  { weight: 2, arbitrary: fc.nat().map((at) => ({ type: 'append_repeat' as const, at })) },
  { weight: 1, arbitrary: garbageRowArb.map((text) => ({ type: 'append_garbage' as const, text })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), garbageRowArb).map(([at, text]) => ({ type: 'edit_row' as const, at, text })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([at, head]) => ({ type: 'edit_hashed_untracked' as const, at, head })) },
  { weight: 2, arbitrary: fc.nat().map((at) => ({ type: 'delete_row' as const, at })) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([at, w]) => ({ type: 'swap_rows' as const, at, with: w })) },
  { weight: 1, arbitrary: fc.nat().map((at) => ({ type: 'cut_tail' as const, at })) },
  { weight: 1, arbitrary: fc.nat().map((at) => ({ type: 'lower_last_seq' as const, at })) },
  { weight: 1, arbitrary: sessionRecordsArb.map((records) => ({ type: 'replace' as const, records })) },
  { weight: 1, arbitrary: fc.constantFrom('replace_same' as const, 'restore_backup' as const, 'truncate_table' as const).map((type) => ({ type })) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('checkpoint_delete' as const, 'checkpoint_version' as const, 'checkpoint_restore_first' as const).map((type) => ({ type })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom('checkpoint_torn' as const, 'checkpoint_garbled' as const, 'checkpoint_bloom' as const), fc.nat())
      .map(([type, at]) => ({ type, at })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'cut_seq' as const,
          'covered_seq' as const,
          'changes' as const,
          'crc' as const,
          'bloom_crc' as const,
          'head_hash' as const,
          'tail_hash' as const,
        ),
        fc.integer({ min: -3, max: 3 }),
      )
      .map(([column, delta]) => ({ type: 'checkpoint_column' as const, column, delta: delta === 0 ? 1 : delta })),
  },
);

let db: TestDatabase;
let sql: pg.Client;
let withCheckpoints: PostgresSessionStore;
let plain: PostgresSessionStore;
const notes: string[] = [];

beforeAll(async () => {
  db = await newDatabase();
  withCheckpoints = new PostgresSessionStore({ spec: db.url, env: {}, checkpoints: { note: (m) => notes.push(m) } });
  plain = new PostgresSessionStore({ spec: db.url, env: {} });
  await plain.migrate();
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  // As a replica would: the append-only trigger is bypassed, the change counter's triggers still fire (ENABLE ALWAYS).
  await sql.query('SET session_replication_role = replica');
});

afterAll(async () => {
  await sql?.end();
  await withCheckpoints?.close();
  await plain?.close();
});

interface Row {
  seq: number;
  text: string;
}

async function rows(): Promise<Row[]> {
  const result = await sql.query(`SELECT seq, record FROM mend.records WHERE session_id = $1 ORDER BY seq`, [SESSION]);
  return result.rows.map((r: { seq: string; record: string }) => ({ seq: Number(r.seq), text: r.record }));
}

async function lastSeq(): Promise<number> {
  const result = await sql.query(`SELECT last_seq FROM mend.sessions WHERE session_id = $1`, [SESSION]);
  return result.rows.length === 0 ? 0 : Number(result.rows[0].last_seq);
}

function columnsOf(text: string): { uuid: string; parent: string | null; type: string } {
  try {
    const value = JSON.parse(text) as { uuid?: unknown; parentUuid?: unknown; type?: unknown };
    return {
      uuid: typeof value.uuid === 'string' ? value.uuid : '',
      parent: typeof value.parentUuid === 'string' ? value.parentUuid : null,
      type: typeof value.type === 'string' ? value.type : 'system',
    };
  } catch {
    return { uuid: '', parent: null, type: 'system' };
  }
}

/** Appends rows after the session's last row (creating the session row when needed), as a writer's commit leaves them (pg-sql.ts). */
async function appendRows(texts: string[]): Promise<void> {
  if (texts.length === 0) return;
  const next = await sql.query(`SELECT coalesce(max(seq), 0) + 1 AS seq FROM mend.records WHERE session_id = $1`, [SESSION]);
  const from = Number(next.rows[0].seq);
  const cols = texts.map(columnsOf);
  await sql.query(
    `INSERT INTO mend.records (session_id, seq, uuid, parent_uuid, type, record)
     SELECT $1, b.seq, b.uuid, b.parent, b.type, b.record FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[]) AS b(seq, uuid, parent, type, record)`,
    [SESSION, texts.map((_, i) => from + i), cols.map((c) => c.uuid), cols.map((c) => c.parent), cols.map((c) => c.type), texts],
  );
  await sql.query(
    `INSERT INTO mend.sessions (session_id, project_root, project_key, created_at, updated_at, last_seq)
     VALUES ($1, $2, $3, now(), now(), $4)
     ON CONFLICT (session_id) DO UPDATE SET last_seq = greatest(mend.sessions.last_seq, EXCLUDED.last_seq), updated_at = now()`,
    [SESSION, scope.projectRoot, projectKey(scope.projectRoot), from + texts.length - 1],
  );
}

/** Deletes the session's rows (counted as a change) and writes these in their place, from seq 1. */
async function recreate(texts: string[]): Promise<void> {
  await sql.query(`DELETE FROM mend.records WHERE session_id = $1`, [SESSION]);
  await sql.query(`DELETE FROM mend.sessions WHERE session_id = $1`, [SESSION]);
  await appendRows(texts);
}

const line = (record: unknown): string => JSON.stringify(record);

function lastUuid(all: Row[]): string | null {
  for (const row of [...all].reverse()) {
    try {
      const value = JSON.parse(row.text) as { uuid?: unknown; isSidechain?: unknown };
      if (typeof value.uuid === 'string' && value.isSidechain !== true) return value.uuid;
    } catch {
      // not a record
    }
  }
  return null;
}

async function checkpointRow(): Promise<Record<string, unknown> | null> {
  return (await sql.query(`SELECT * FROM mend.plan_checkpoints WHERE session_id = $1`, [SESSION])).rows[0] ?? null;
}

async function apply(mutation: Mutation, base: string[], first: Record<string, unknown> | null): Promise<void> {
  const all = await rows();
  const pick = (at: number): Row | undefined => all[at % Math.max(1, all.length)];
  switch (mutation.type) {
    case 'append_turns':
    case 'append_peer':
    case 'append_other_session':
      return appendRows(mutation.make(lastUuid(all)).map(line));
    case 'append_branch': {
      const uuids = all.map((r) => columnsOf(r.text).uuid).filter((u) => u !== '');
      return appendRows(mutation.make(uuids.length === 0 ? null : uuids[mutation.at % uuids.length]!).map(line));
    }
    case 'append_records':
      return appendRows(
        mutation.records.map((r) =>
          line({ ...r, uuid: `${r.uuid}n${counter}`, parentUuid: r.parentUuid === null ? lastUuid(all) : `${r.parentUuid}n${counter}` }),
        ),
      );
    case 'append_repeat': {
      const row = pick(mutation.at);
      return row === undefined ? undefined : appendRows([row.text]);
    }
    case 'append_garbage':
      return appendRows([mutation.text]);
    case 'edit_row': {
      const row = pick(mutation.at);
      if (row !== undefined) await sql.query(`UPDATE mend.records SET record = $3 WHERE session_id = $1 AND seq = $2`, [SESSION, row.seq, mutation.text]);
      return;
    }
    case 'edit_hashed_untracked': {
      // With the change counter's triggers off: only the identity hashes can see it (head rows, or the rows around the cut).
      const ckpt = await checkpointRow();
      if (ckpt === null) return;
      const [from, to] = mutation.head ? [1, Number(ckpt['head_to'])] : [Number(ckpt['tail_from']), Number(ckpt['covered_seq'])];
      if (to < from) return;
      const seq = from + (mutation.at % (to - from + 1));
      await sql.query(`ALTER TABLE mend.records DISABLE TRIGGER records_updated`);
      try {
        await sql.query(`UPDATE mend.records SET record = record || ' ' WHERE session_id = $1 AND seq = $2`, [SESSION, seq]);
      } finally {
        await sql.query(`ALTER TABLE mend.records ENABLE ALWAYS TRIGGER records_updated`);
      }
      return;
    }
    case 'delete_row': {
      const row = pick(mutation.at);
      if (row !== undefined) await sql.query(`DELETE FROM mend.records WHERE session_id = $1 AND seq = $2`, [SESSION, row.seq]);
      return;
    }
    case 'swap_rows': {
      const a = pick(mutation.at);
      const b = pick(mutation.with);
      if (a === undefined || b === undefined || a.seq === b.seq) return;
      await sql.query(`UPDATE mend.records SET record = CASE seq WHEN $2 THEN $5 ELSE $4 END WHERE session_id = $1 AND seq IN ($2, $3)`, [
        SESSION,
        a.seq,
        b.seq,
        a.text,
        b.text,
      ]);
      return;
    }
    case 'cut_tail': {
      const row = pick(mutation.at);
      if (row === undefined) return;
      await sql.query(`DELETE FROM mend.records WHERE session_id = $1 AND seq > $2`, [SESSION, row.seq]);
      await sql.query(`UPDATE mend.sessions SET last_seq = $2 WHERE session_id = $1`, [SESSION, row.seq]);
      return;
    }
    case 'lower_last_seq': {
      // The session row says fewer rows than there are (a read stops there); no record is touched.
      const row = pick(mutation.at);
      if (row !== undefined) await sql.query(`UPDATE mend.sessions SET last_seq = $2 WHERE session_id = $1`, [SESSION, row.seq]);
      return;
    }
    case 'replace':
      return recreate(mutation.records.map(line));
    case 'replace_same':
      return recreate(all.map((r) => r.text));
    case 'restore_backup':
      return recreate(base);
    case 'truncate_table': {
      const last = await lastSeq();
      await sql.query(`TRUNCATE mend.records`);
      await sql.query(`DELETE FROM mend.sessions WHERE session_id = $1`, [SESSION]);
      await appendRows(all.filter((r) => r.seq <= last).map((r) => r.text));
      return;
    }
    case 'checkpoint_delete':
      await sql.query(`DELETE FROM mend.plan_checkpoints WHERE session_id = $1`, [SESSION]);
      return;
    case 'checkpoint_version':
      await sql.query(`UPDATE mend.plan_checkpoints SET version = 99 WHERE session_id = $1`, [SESSION]);
      return;
    case 'checkpoint_restore_first': {
      // An older checkpoint row (a backup of the cache table): valid only if the rows it names are still there, unchanged.
      if (first === null) return;
      const columns = Object.keys(first);
      await sql.query(`DELETE FROM mend.plan_checkpoints WHERE session_id = $1`, [SESSION]);
      await sql.query(
        `INSERT INTO mend.plan_checkpoints (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
        columns.map((c) => first[c]),
      );
      return;
    }
    case 'checkpoint_torn':
      await sql.query(`UPDATE mend.plan_checkpoints SET body = left(body, $2 % greatest(length(body), 1)) WHERE session_id = $1`, [SESSION, mutation.at]);
      return;
    case 'checkpoint_garbled':
      await sql.query(
        `UPDATE mend.plan_checkpoints SET body = overlay(body placing chr(ascii(substr(body, $2 % length(body) + 1, 1)) # 1) from $2 % length(body) + 1 for 1)
          WHERE session_id = $1`,
        [SESSION, mutation.at],
      );
      return;
    case 'checkpoint_bloom':
      await sql.query(
        `UPDATE mend.plan_checkpoints SET bloom = set_byte(bloom, $2 % length(bloom), get_byte(bloom, $2 % length(bloom)) # 85) WHERE session_id = $1 AND length(bloom) > 0`,
        [SESSION, mutation.at],
      );
      return;
    case 'checkpoint_column': {
      const c = mutation.column;
      const set = c === 'head_hash' || c === 'tail_hash' ? `${c} = md5(${c})` : `${c} = greatest(${c} + $2, 1)`;
      await sql.query(`UPDATE mend.plan_checkpoints SET ${set} WHERE session_id = $1 AND covered_seq + $2 >= cut_seq AND cut_seq + $2 <= covered_seq`, [
        SESSION,
        mutation.delta,
      ]);
      return;
    }
  }
}

/** What a listing shows of the session, from every record (the plain read). */
async function referenceFacts(ref: SessionRef): Promise<LogFacts> {
  const read = await plain.read(ref);
  const firstUser = read.records.find((r) => r.record.type === 'user')?.record;
  const text = firstUser?.type === 'user' ? firstUser.message.parts.find((p) => typeof p.text === 'string')?.text : undefined;
  return {
    records: read.records.length,
    started: read.records[0]?.record.timestamp ?? null,
    lastUpdate: read.records.at(-1)?.record.timestamp ?? null,
    firstPrompt: text === undefined ? null : text.slice(0, 200),
  };
}

const plainValue = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

async function planBoth(allowAutoContinue: boolean, activeWriter: typeof writer | null): Promise<void> {
  if ((await lastSeq()) === 0) return;
  const ref = await plain.resolve(scope, SESSION);
  const expected = await loadPlanHead(plain, ref, allowAutoContinue, activeWriter);
  const got = await loadPlanAndFacts(withCheckpoints, await withCheckpoints.resolve(scope, SESSION), allowAutoContinue, activeWriter);
  await settledCheckpointWrites();
  expect(plainValue(got.planned)).toEqual(plainValue(expected));
  expect(got.facts).toEqual(await referenceFacts(ref));
}

await describePostgres('plan checkpoints in PostgreSQL rows', () => {
  it("give the plain pass's plan however the rows and the checkpoint row change between reads", { timeout: 240_000 }, async () => {
    let warmReads = 0;
    let appendReads = 0;
    let mismatches = 0;
    await fc.assert(
      fc.asyncProperty(
        baseArb,
        fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.boolean(),
        async (baseRecords, mutations, allowAutoContinue, live) => {
          counter++;
          await sql.query(`DELETE FROM mend.plan_checkpoints`);
          const base = baseRecords.map(line);
          await recreate(base);
          const activeWriter = live ? writer : null;
          await planBoth(allowAutoContinue, activeWriter);
          const first = await checkpointRow();
          for (const mutation of mutations) {
            await apply(mutation, base, first);
            notes.length = 0;
            const had = (await checkpointRow()) !== null;
            await planBoth(allowAutoContinue, activeWriter);
            if (notes.some((n) => n.includes('not used'))) mismatches++;
            if (had && mutation.type === 'append_turns') {
              appendReads++;
              if (!notes.some((n) => n.includes('not used'))) warmReads++;
            }
            // Read again: through the checkpoint the read above left (or none).
            await planBoth(allowAutoContinue, activeWriter);
          }
        },
      ),
      { numRuns: Number(process.env.CHECKPOINT_RUNS ?? 120) },
    );
    // The checkpoint is used: most of mend's own appends are read through it; and its checks do refuse.
    expect(appendReads).toBeGreaterThan(20);
    expect(warmReads).toBeGreaterThan(appendReads / 2);
    expect(mismatches).toBeGreaterThan(10);
  });

  it('an unchanged session is planned from the row alone; an append reads only the rows after the cut', async () => {
    counter++;
    await sql.query(`DELETE FROM mend.plan_checkpoints`);
    const make = fc.sample(turnsArb('w'), { numRuns: 1, seed: 7 })[0]!;
    const records: ChatRecord[] = [];
    for (let i = 0; i < 40; i++)
      records.push(
        ...make(records.at(-1)?.uuid ?? null).map((r) => ({ ...r, uuid: `${r.uuid}-${i}`, parentUuid: r.parentUuid === null ? null : `${r.parentUuid}-${i}` })),
      );
    // Chained: each batch continues the last one.
    for (let i = 1; i < records.length; i++) records[i] = { ...records[i]!, parentUuid: records[i - 1]!.uuid };
    await recreate(records.map(line));
    notes.length = 0;
    await planBoth(false, null);
    const ckpt = (await checkpointRow())!;
    expect(Number(ckpt['covered_seq'])).toBe(records.length);
    expect(Number(ckpt['cut_seq'])).toBeGreaterThan(1);
    await planBoth(false, null);
    const last = records.at(-1)!.uuid;
    await appendRows(make(last).map((r) => line({ ...r, uuid: `${r.uuid}-z`, parentUuid: r.parentUuid === last ? last : `${r.parentUuid}-z` })));
    await planBoth(false, null);
    expect(notes).toEqual([]);
    expect(Number((await checkpointRow())!['covered_seq'])).toBe(await lastSeq());
  });

  it('a read-only user reads through the checkpoint and is only told it could not write one', async () => {
    const role = `mend_ro_${process.pid}_${counter}`;
    await adminQuery(`DROP ROLE IF EXISTS ${role}`);
    await adminQuery(`CREATE ROLE ${role} LOGIN`);
    try {
      await sql.query(`GRANT USAGE ON SCHEMA mend TO ${role}`);
      await sql.query(`GRANT SELECT ON ALL TABLES IN SCHEMA mend TO ${role}`);
      const url = new URL(db.url);
      url.username = role;
      const roNotes: string[] = [];
      const readOnly = new PostgresSessionStore({ spec: url.toString(), env: {}, checkpoints: { note: (m) => roNotes.push(m) } });
      try {
        await sql.query(`DELETE FROM mend.plan_checkpoints`);
        const ref = await plain.resolve(scope, SESSION);
        const expected = await loadPlanHead(plain, ref, false, null);
        const got = await loadPlanHead(readOnly, ref, false, null);
        await settledCheckpointWrites();
        expect(plainValue(got)).toEqual(plainValue(expected));
        expect(roNotes.some((n) => /no checkpoint written \(.*permission denied/.test(n))).toBe(true);
        // A checkpoint another user wrote is used by the read-only one.
        await loadPlanHead(withCheckpoints, ref, false, null);
        await settledCheckpointWrites();
        roNotes.length = 0;
        expect(plainValue(await loadPlanHead(readOnly, ref, false, null))).toEqual(plainValue(expected));
        expect(roNotes).toEqual([]);
      } finally {
        await readOnly.close();
      }
    } finally {
      await sql.query(`REVOKE ALL ON ALL TABLES IN SCHEMA mend FROM ${role}`);
      await sql.query(`REVOKE ALL ON SCHEMA mend FROM ${role}`);
      await adminQuery(`DROP ROLE IF EXISTS ${role}`);
    }
  });

  it('a database at schema version 1 is read as before: a note, no checkpoint, nothing created', async () => {
    const old = await newDatabase();
    const client = new pg.Client({ connectionString: old.url });
    await client.connect();
    const v1Notes: string[] = [];
    const reader = new PostgresSessionStore({ spec: old.url, env: {}, checkpoints: { note: (m) => v1Notes.push(m) } });
    const oracle = new PostgresSessionStore({ spec: old.url, env: {} });
    try {
      await client.query(`CREATE SCHEMA mend`);
      await client.query(
        `CREATE TABLE mend.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      await client.query(MIGRATIONS[0]!.sql);
      await client.query(`INSERT INTO mend.schema_migrations (version, name) VALUES (1, $1)`, [MIGRATIONS[0]!.name]);
      const make = fc.sample(turnsArb('v'), { numRuns: 1, seed: 3 })[0]!;
      const texts = make(null).map(line);
      await client.query(
        `INSERT INTO mend.sessions (session_id, project_root, project_key, created_at, updated_at, last_seq) VALUES ($1, $2, $3, now(), now(), $4)`,
        [SESSION, scope.projectRoot, projectKey(scope.projectRoot), texts.length],
      );
      for (const [i, text] of texts.entries()) {
        const c = columnsOf(text);
        await client.query(`INSERT INTO mend.records (session_id, seq, uuid, parent_uuid, type, record) VALUES ($1, $2, $3, $4, $5, $6)`, [
          SESSION,
          i + 1,
          c.uuid,
          c.parent,
          c.type,
          text,
        ]);
      }
      const ref = await oracle.resolve(scope, SESSION);
      for (let i = 0; i < 2; i++) {
        const got = await loadPlanHead(reader, ref, false, null);
        await settledCheckpointWrites();
        expect(plainValue(got)).toEqual(plainValue(await loadPlanHead(oracle, ref, false, null)));
      }
      expect(v1Notes.every((n) => n.includes('no checkpoint table yet'))).toBe(true);
      expect(v1Notes.length).toBe(2);
      const tables = await client.query(`SELECT to_regclass('mend.plan_checkpoints') AS t, (SELECT max(version) FROM mend.schema_migrations) AS v`);
      expect(tables.rows[0]).toEqual({ t: null, v: 1 });
    } finally {
      await reader.close();
      await oracle.close();
      await client.end();
    }
  });

  it('MEND_CHECKPOINTS=0 gives the PostgreSQL store no checkpoint slot; on, it has one', async () => {
    const off: SessionStore = await openStore(db.url, {}, {});
    const on: SessionStore = await openStore(db.url, {}, { checkpoints: {} });
    try {
      const ref = await off.resolve(scope, SESSION);
      expect(off.checkpointSlot?.(ref) ?? null).toBeNull();
      expect(on.checkpointSlot?.(ref)?.kind).toBe('rows');
    } finally {
      await off.close();
      await on.close();
    }
  });

  it('a runtime refreshes the checkpoint row after each turn, off the turn; the next resume reads through it', async () => {
    const fx = runtimeFixture([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    const runtimeNotes: string[] = [];
    const store = new PostgresSessionStore({ spec: db.url, env: {}, checkpoints: { note: (m) => runtimeNotes.push(m) } });
    try {
      fx.deps.store = store;
      const runtime = await SessionRuntime.open(fx.deps, { target: { type: 'new' }, access: 'write', settings: defaultSettings });
      for (const text of ['a', 'b', 'c']) expect(await runtime.prompt([{ text }])).toMatchObject({ status: 'success' });
      await runtime.close();
      const ref = await store.resolve(fx.deps.scope, runtime.sessionId);
      // The checkpoint row describes the session as the last turn left it.
      const row = (await sql.query(`SELECT covered_seq FROM mend.plan_checkpoints WHERE session_id = $1`, [runtime.sessionId])).rows[0] as {
        covered_seq: string;
      };
      const session = (await sql.query(`SELECT last_seq FROM mend.sessions WHERE session_id = $1`, [runtime.sessionId])).rows[0] as { last_seq: string };
      expect(Number(row.covered_seq)).toBe(Number(session.last_seq));
      const got = await loadPlanHead(store, ref, false, null);
      expect(plainValue(got)).toEqual(plainValue(await loadPlanHead(plain, await plain.resolve(fx.deps.scope, runtime.sessionId), false, null)));
      expect(runtimeNotes).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("a refresh after a turn brings the checkpoint up to the session's last row", async () => {
    const ref = await plain.resolve(scope, SESSION);
    await loadPlanHead(withCheckpoints, ref, false, null);
    await settledCheckpointWrites();
    const make = fc.sample(turnsArb('r'), { numRuns: 1, seed: 11 })[0]!;
    await appendRows(make(lastUuid(await rows())).map(line));
    notes.length = 0;
    await refreshPlanCheckpoint(withCheckpoints, ref);
    expect(Number((await checkpointRow())?.['covered_seq'])).toBe(await lastSeq());
    await planBoth(false, null);
    expect(notes).toEqual([]);
  });
});
