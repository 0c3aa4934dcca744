/**
 * Where the PostgreSQL store connects, and what it says when it cannot: a
 * `store_unavailable` error naming host and database, never the password. Reads
 * of an empty (unmigrated) database write nothing at all.
 */
import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { expect, it } from 'vitest';
import { isMendError, type MendError } from '../../src/errors.js';
import { openStore, migrateStore, storeSpec } from '../../src/store/open-store.js';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import { describeTarget, resolvePgTarget } from '../../src/store/postgres/pg-config.js';
import { PostgresSessionStore } from '../../src/store/postgres/pg-store.js';
import { adminQuery, databasesForFile, describePostgres } from '../support/postgres.js';

const newDatabase = databasesForFile('config');

it('resolves a URL first, then PG* variables, then libpq defaults', () => {
  const fromUrl = resolvePgTarget('postgres://u:pw@db.example:6543/mendb?application_name=x', { PGHOST: 'ignored', PGDATABASE: 'ignored' });
  expect(fromUrl).toEqual({ host: 'db.example', port: 6543, database: 'mendb', user: 'u', sslmode: 'disable', applicationName: 'x' });
  expect(fromUrl.password).toBe('pw');
  // The password is there for the driver, never in a dump of the target or the store.
  expect(JSON.stringify(fromUrl)).not.toContain('pw');
  const store = new PostgresSessionStore({ spec: 'postgres://u:hunter2@db.example/mendb', env: {} });
  expect(JSON.stringify(store)).toBe('{"kind":"postgres","target":"db.example:5432/mendb"}');
  expect(inspect(store, { showHidden: false })).not.toContain('hunter2');
  const fromEnv = resolvePgTarget('postgres', { PGHOST: 'h', PGPORT: '5433', PGDATABASE: 'd', PGUSER: 'me', PGPASSWORD: 'secret', PGSSLMODE: 'require' });
  expect(fromEnv).toMatchObject({ host: 'h', port: 5433, database: 'd', user: 'me', password: 'secret', sslmode: 'require' });
  expect(describeTarget(fromEnv)).toBe('h:5433/d');
  expect(resolvePgTarget('postgresql://localhost', { USER: 'someone' })).toMatchObject({ host: 'localhost', port: 5432, database: 'someone', user: 'someone' });
  expect(() => resolvePgTarget('postgres://h/d?port=abc', {})).toThrow(/port/);
  expect(() => resolvePgTarget('postgres://u:pw@h:99999/d', {})).toThrow(/Malformed.*\*\*\*@/);
});

it('opens jsonl by default and refuses an unknown store spec', async () => {
  expect(storeSpec(undefined, {})).toBe('jsonl');
  expect(storeSpec(undefined, { MEND_STORE: 'postgres://h/d' })).toBe('postgres://h/d');
  expect(storeSpec('jsonl', { MEND_STORE: 'postgres://h/d' })).toBe('jsonl');
  expect(await openStore('jsonl', { MEND_HOME: '/tmp/mend-home-never-written' })).toBeInstanceOf(JsonlSessionStore);
  const pg = await openStore('postgres://h/d', {});
  expect(pg).toBeInstanceOf(PostgresSessionStore);
  await pg.close();
  const refused = await openStore('mysql://u:hunter2@h/d', {}).catch((e: unknown) => e as MendError);
  expect(isMendError(refused, 'usage')).toBe(true);
  expect((refused as MendError).message).not.toContain('hunter2');
});

it('an unreachable server is store_unavailable naming host and database, never the password', async () => {
  // Port 1 on loopback: nothing listens there, the refusal is immediate.
  const store = new PostgresSessionStore({ spec: 'postgres://mend:s3cret-pw@127.0.0.1:1/nowhere', env: {}, tuning: { connectTimeoutMs: 2000 } });
  const scope = { projectRoot: '/work/x', cwd: '/work/x' };
  const ref = { store: 'postgres' as const, sessionId: randomUUID(), projectRoot: '/work/x', location: 'x' };
  const attempts = [
    () => store.list(scope),
    () => store.latest(scope),
    () => store.resolve(scope, ref.sessionId),
    () => store.read(ref),
    () => store.acquire(ref, { host: 'h', pid: 1 }),
  ];
  for (const attempt of attempts) {
    const error = await (attempt() as Promise<unknown>).then(
      () => null,
      (e: unknown) => e as MendError,
    );
    expect(isMendError(error, 'store_unavailable'), String(error)).toBe(true);
    expect(error!.message).toContain('127.0.0.1:1/nowhere');
    expect(error!.message).not.toContain('s3cret-pw');
    expect(JSON.stringify(error!.details)).not.toContain('s3cret-pw');
    expect(error!.details).toMatchObject({ host: '127.0.0.1', database: 'nowhere' });
  }
  await store.close();
});

await describePostgres('PostgreSQL store against the real server', () => {
  it('a missing database is store_unavailable naming it', async () => {
    const db = await newDatabase();
    const store = new PostgresSessionStore({ spec: db.url.replace(db.name, `${db.name}_missing`), env: {} });
    const error = await store.list({ projectRoot: '/w', cwd: '/w' }).catch((e: unknown) => e as MendError);
    expect(isMendError(error, 'store_unavailable')).toBe(true);
    expect((error as MendError).message).toContain(`${db.name}_missing`);
    await store.close();
  });

  it('reading, listing and looking up in an empty database write nothing', async () => {
    const db = await newDatabase();
    const store = new PostgresSessionStore({ spec: db.url, env: {} });
    const scope = { projectRoot: '/work/empty', cwd: '/work/empty' };
    const ref = await store.resolve(scope, randomUUID());
    expect(await store.list(scope)).toEqual([]);
    expect(await store.latest(scope)).toBeNull();
    expect(await store.exists(ref)).toBe(false);
    expect(await store.activeWriter(ref)).toBeNull();
    expect(await store.schemaVersion()).toBe(0);
    await expect(store.read(ref)).rejects.toSatisfy((e) => isMendError(e, 'session_not_found'));
    await expect(store.readOutline(ref)).rejects.toSatisfy((e) => isMendError(e, 'session_not_found'));
    await (
      await store.newSession(scope, randomUUID())
    ).sessionId;
    const created = await adminQuery(
      `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')`,
      [],
      db.url,
    );
    expect(created.rows).toEqual([]);
    const schemas = await adminQuery(`SELECT nspname FROM pg_namespace WHERE nspname = 'mend'`, [], db.url);
    expect(schemas.rows).toEqual([]);
    await store.close();
  });

  it('a database migrated by a newer mend is read but never written', async () => {
    const db = await newDatabase();
    const older = new PostgresSessionStore({ spec: db.url, env: {} });
    await older.migrate();
    await adminQuery(`INSERT INTO mend.schema_migrations (version, name) VALUES (99, 'from the future')`, [], db.url);
    const store = new PostgresSessionStore({ spec: db.url, env: {} });
    const scope = { projectRoot: '/work/future', cwd: '/work/future' };
    expect(await store.list(scope)).toEqual([]);
    const ref = await store.newSession(scope, randomUUID());
    const refused = await store.acquire(ref, { host: 'h', pid: 1 }).catch((e: unknown) => e as MendError);
    expect(isMendError(refused, 'store_unavailable')).toBe(true);
    expect((refused as MendError).message).toMatch(/version 99.*upgrade mend/);
    await older.close();
    await store.close();
  });

  it('honours PG* variables for everything the spec leaves out; migrate creates the schema once', async () => {
    const db = await newDatabase();
    const admin = new URL(db.url);
    const env = { PGHOST: admin.hostname, PGPORT: admin.port || '5432', PGUSER: decodeURIComponent(admin.username) || 'root', PGDATABASE: db.name };
    const store = await openStore('postgres', env);
    expect((await migrateStore(store)).applied).toEqual([1, 2]);
    expect((await migrateStore(store)).applied).toEqual([]);
    expect(await (store as PostgresSessionStore).schemaVersion()).toBe(2);
    expect(await store.list({ projectRoot: '/w', cwd: '/w' })).toEqual([]);
    await store.close();
  });
});
