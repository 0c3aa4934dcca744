/**
 * The store's connections: a bounded pool for reads and short writes, and one
 * dedicated connection per writer lease (its advisory lock lives and dies with
 * that connection, so it must never go back to a pool). Knows whether the schema
 * is present, and migrates only when asked to or before the first write.
 */
import pg from 'pg';
import { isMendError } from '../../errors.js';
import { LATEST_VERSION } from './pg-schema.js';
import { assertKnownVersion, runMigrations, schemaVersion, type MigrationResult } from './pg-migrate.js';
import { clientConfig, poolConfig, type PgTarget, type PgTuning } from './pg-config.js';
import { readError, unavailable, writeError } from './pg-errors.js';

export class PgDatabase {
  private pool: pg.Pool | null = null;
  /** Set once the schema is known to be current; reads of an unmigrated database re-check each time. */
  private migrated = false;
  private migrating: Promise<MigrationResult> | null = null;
  private schemaSeen = false;

  constructor(
    readonly target: PgTarget,
    readonly tuning: PgTuning,
  ) {}

  private getPool(): pg.Pool {
    if (this.pool === null) {
      this.pool = new pg.Pool(poolConfig(this.target, this.tuning));
      // An idle pooled connection that the server drops emits 'error' on the pool;
      // without a listener Node would crash the process. The next query reconnects.
      this.pool.on('error', () => undefined);
    }
    return this.pool;
  }

  /** A pooled connection for a streamed read; the caller releases it (with `true` after an error). */
  async poolClient(doing: string): Promise<pg.PoolClient> {
    try {
      return await this.getPool().connect();
    } catch (error) {
      throw unavailable(this.target, error, doing);
    }
  }

  /**
   * Runs `fn` on a pooled connection; connection failures become store_unavailable.
   * A read whose pooled connection turns out dead (the server restarted, an idle
   * connection was cut) is retried on fresh connections with bounded backoff:
   * reads are idempotent. Writes here (migrations) are not retried.
   */
  async withClient<T>(doing: string, fn: (client: pg.PoolClient) => Promise<T>, kind: 'read' | 'write' = 'read'): Promise<T> {
    const attempts = kind === 'read' ? Math.max(1, this.tuning.reconnectAttempts) : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(doing, fn, kind);
      } catch (error) {
        // A server that refuses new connections is reported at once; only a connection
        // that died under a read is worth another try.
        const diedMidRead = isMendError(error, 'store_unavailable') && error.details?.['phase'] === 'query';
        if (attempt >= attempts || !diedMidRead) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.tuning.reconnectBaseDelayMs * 2 ** (attempt - 1)));
      }
    }
  }

  private async once<T>(doing: string, fn: (client: pg.PoolClient) => Promise<T>, kind: 'read' | 'write'): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.getPool().connect();
    } catch (error) {
      throw unavailable(this.target, error, doing);
    }
    let broken = false;
    // A backend that dies while the client is checked out between two statements (a read
    // parsing one batch while it waits for the next, a checkpoint refresh after a turn) is
    // reported as an 'error' event on the client, which the pool listens for only while the
    // client is idle: without a listener here it would end the process. The next statement
    // fails and reports it; the client is not reused.
    const onError = (): void => {
      broken = true;
    };
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (error) {
      broken = true;
      const mapped = kind === 'read' ? readError(this.target, error, doing) : writeError(this.target, error, doing);
      if (mapped.code === 'store_unavailable' && mapped.details) mapped.details['phase'] = 'query';
      throw mapped;
    } finally {
      client.off('error', onError);
      // A client that failed mid-statement may be in an unknown state: drop it rather than reuse it.
      client.release(broken);
    }
  }

  /** A connection of its own (for a writer lease). The caller must end it. */
  async connectDedicated(doing: string): Promise<pg.Client> {
    const client = new pg.Client(clientConfig(this.target, this.tuning));
    // A terminated backend is reported both as a failed query and as an 'error'
    // event; the lease learns of it from the query, the listener only keeps Node alive.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw unavailable(this.target, error, doing);
    }
    return client;
  }

  /** 0 when the schema does not exist. Never creates anything. */
  schemaVersion(): Promise<number> {
    return this.withClient('checking the schema', (client) => schemaVersion(client));
  }

  /** Whether the store's tables exist; a read of a database without them finds nothing. */
  async hasSchema(): Promise<boolean> {
    if (this.migrated || this.schemaSeen) return true;
    // Once seen, the schema stays (nothing drops it), so later reads skip the look-up.
    this.schemaSeen = (await this.schemaVersion()) > 0;
    return this.schemaSeen;
  }

  /** Creates or upgrades the schema (idempotent; safe against a concurrent migrate). */
  async migrate(): Promise<MigrationResult> {
    this.migrating ??= this.withClient('migrating the schema', (client) => runMigrations(client), 'write').finally(() => {
      this.migrating = null;
    });
    const result = await this.migrating;
    this.migrated = true;
    return result;
  }

  /**
   * Before the first write: migrate unless the schema is known to be current.
   * Runs on the writer's own connection when given, so a writer needs one
   * connection, not two (50 writers must fit in a server's 100).
   */
  async ensureSchema(client?: pg.ClientBase): Promise<void> {
    if (this.migrated) return;
    if (client === undefined) {
      await this.withClient('checking the schema', (c) => this.ensureSchemaOn(c), 'write');
      return;
    }
    try {
      await this.ensureSchemaOn(client);
    } catch (error) {
      throw writeError(this.target, error, 'migrating the schema');
    }
  }

  private async ensureSchemaOn(client: pg.ClientBase): Promise<void> {
    const version = await schemaVersion(client);
    assertKnownVersion(version);
    if (version < LATEST_VERSION) await runMigrations(client);
    this.migrated = true;
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.end().catch(() => undefined);
  }
}
