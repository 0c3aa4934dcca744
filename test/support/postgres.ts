/**
 * The real PostgreSQL server for tests (never a mock). `MEND_TEST_PG_URL` names
 * the server and an admin database (.ci/run exports a fresh one per run); by
 * default 127.0.0.1:5432 as root. Each test file creates a database of its own
 * with a random name and drops it afterwards.
 *
 * No reachable server: the PostgreSQL tests are skipped with a loud warning, and
 * with CI=true they fail instead (a CI run must never pass without them).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { outsideTheProcess } from './outside-the-process.js';

export const ADMIN_URL = process.env['MEND_TEST_PG_URL'] || 'postgres://root@127.0.0.1:5432/postgres';

/** The admin URL with another database name. */
export function urlFor(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function probe(): Promise<string | null> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

let probed: Promise<string | null> | null = null;
/** Null when the server answers, else why not. */
export function pgUnreachable(): Promise<string | null> {
  probed ??= probe();
  return probed;
}

export async function adminQuery(sql: string, params: unknown[] = [], url = ADMIN_URL): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(label = 't'): Promise<TestDatabase> {
  outsideTheProcess('PostgreSQL');
  const name = `mend_${label}_${randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  return {
    name,
    url: urlFor(name),
    // FORCE: a test that failed half way may leave a writer connected.
    drop: async () => void (await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

/** A fresh database per call, all dropped after the file's tests. */
export function databasesForFile(label: string): () => Promise<TestDatabase> {
  const created: TestDatabase[] = [];
  // Dropping waits for checkpoints on a busy server: more time than a test hook's default.
  afterAll(async () => {
    for (const db of created) await db.drop();
  }, 180_000);
  return async () => {
    const db = await createTestDatabase(label);
    created.push(db);
    return db;
  };
}

/**
 * describe() when the server answers; otherwise a loud skip, or in CI a failure.
 * Call with top-level await in a test file.
 */
export async function describePostgres(name: string, body: () => void): Promise<void> {
  outsideTheProcess('PostgreSQL');
  const why = await pgUnreachable();
  if (why === null) {
    describe(name, body);
    return;
  }
  const message = `PostgreSQL at ${new URL(ADMIN_URL).host} is not reachable (${why}): the PostgreSQL store tests did NOT run`;
  if (process.env['CI'] === 'true') {
    describe(name, () => {
      it('needs a reachable PostgreSQL server in CI', () => {
        throw new Error(message);
      });
    });
    return;
  }
  console.warn(`\n${'!'.repeat(80)}\n!! SKIPPED: ${message}\n${'!'.repeat(80)}\n`);
  describe.skip(name, body);
}
