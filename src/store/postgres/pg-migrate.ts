/**
 * Creates and upgrades the store's schema. Only `migrate()` and the first write
 * get here; reads ask `schemaVersion()`, which looks without creating anything,
 * so reading, listing or planning against an empty database writes nothing.
 *
 * All migrations run in one transaction holding a transaction-level advisory
 * lock: a second process that migrates at the same moment waits for the first,
 * then finds every version applied and does nothing.
 */
import type { ClientBase } from 'pg';
import { z } from 'zod';
import { MendError } from '../../errors.js';
import { LATEST_VERSION, MIGRATIONS, MIGRATION_LOCK_KEY, SCHEMA } from './pg-schema.js';

export interface MigrationResult {
  /** Versions applied by this call, in order (empty when the database was up to date). */
  applied: number[];
  version: number;
}

const VersionRow = z.object({ version: z.coerce.number().int().nullable() });

/** The applied schema version, or 0 when the store's schema does not exist. Reads only catalogs. */
export async function schemaVersion(client: ClientBase): Promise<number> {
  const exists = await client.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [`${SCHEMA}.schema_migrations`]);
  if (exists.rows[0]?.present !== true) return 0;
  const row = VersionRow.parse((await client.query(`SELECT max(version) AS version FROM ${SCHEMA}.schema_migrations`)).rows[0]);
  return row.version ?? 0;
}

export function assertKnownVersion(version: number): void {
  if (version > LATEST_VERSION) {
    throw new MendError(
      'store_unavailable',
      `The session store's schema is at version ${version}, newer than this mend knows (${LATEST_VERSION}): upgrade mend`,
      { version, known: LATEST_VERSION },
    );
  }
}

export async function runMigrations(client: ClientBase): Promise<MigrationResult> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_migrations (
         version    integer PRIMARY KEY,
         name       text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const current = await schemaVersion(client);
    assertKnownVersion(current);
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(migration.sql);
      await client.query(`INSERT INTO ${SCHEMA}.schema_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
    return { applied, version: Math.max(current, ...applied) };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
