/**
 * The one way to open a session store from a `--store` value or `MEND_STORE`:
 * `jsonl` (the default, files under MEND_HOME) or a PostgreSQL URL
 * (`postgres://user@host:5432/db`, or `postgres` to take everything from the
 * libpq PG* variables). Opening connects to nothing: the first read or write
 * does, and an unreachable server is then a `store_unavailable` error.
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { MendError } from '../errors.js';
import type { WriteFaultHook } from '../session/log-writer.js';
import type { AppendMode } from '../session/queued-append/log-appender.js';
import type { OutlineParallel } from '../session/outline/history-reader.js';
import { JsonlSessionStore } from './jsonl/jsonl-store.js';
import { isPostgresSpec, redactUrl, type Env, type PgTuning } from './postgres/pg-config.js';
import type { MigrationResult } from './postgres/pg-migrate.js';
import type { PostgresSessionStore } from './postgres/pg-store.js';
import type { SessionStore } from './session-store.js';

export interface OpenStoreOptions {
  /** Overrides MEND_HOME for the JSONL store. */
  home?: string;
  faultHook?: WriteFaultHook;
  warn?: (message: string) => void;
  tuning?: Partial<PgTuning>;
  /** The JSONL store's outline pass on a worker thread (JsonlStoreOptions.outline). */
  outline?: OutlineParallel | false;
  /** False: the JSONL store's outline pass parses every line, no line scanner (JsonlStoreOptions.outlineScan). */
  outlineScan?: boolean;
  /** How the JSONL store's leases append (JsonlStoreOptions.appendMode); PostgreSQL commits are awaited either way. */
  appendMode?: AppendMode;
  /** Plan checkpoints: in the JSONL store's cache (JsonlStoreOptions.checkpoints), in PostgreSQL rows (PostgresStoreOptions.checkpoints); off when absent. */
  checkpoints?: { note?: ((message: string) => void) | undefined };
}

/** The store spec in force: the flag, else MEND_STORE, else `jsonl`. */
export function storeSpec(flag: string | undefined, env: Env): string {
  return flag || env['MEND_STORE'] || 'jsonl';
}

export async function openStore(spec: string, env: Env, options: OpenStoreOptions = {}): Promise<SessionStore> {
  if (spec === 'jsonl') {
    const home = options.home ?? (env['MEND_HOME'] || join(homedir(), '.mend'));
    checkHome(home);
    return new JsonlSessionStore({
      home,
      ...(options.faultHook ? { faultHook: options.faultHook } : {}),
      ...(options.warn ? { warn: options.warn } : {}),
      ...(options.outline !== undefined ? { outline: options.outline } : {}),
      ...(options.outlineScan !== undefined ? { outlineScan: options.outlineScan } : {}),
      ...(options.appendMode !== undefined ? { appendMode: options.appendMode } : {}),
      ...(options.checkpoints !== undefined ? { checkpoints: options.checkpoints } : {}),
    });
  }
  if (isPostgresSpec(spec)) {
    // Imported only for a PostgreSQL store: `pg` and its helpers are ~15 modules every
    // JSONL start-up would otherwise load (start-up to system/init).
    const { PostgresSessionStore } = await import('./postgres/pg-store.js');
    return new PostgresSessionStore({
      spec,
      env,
      ...(options.tuning ? { tuning: options.tuning } : {}),
      ...(options.checkpoints !== undefined ? { checkpoints: options.checkpoints } : {}),
    });
  }
  throw new MendError('usage', `Unknown session store ${JSON.stringify(redactUrl(spec))}: use jsonl or a postgres:// URL`, { spec: redactUrl(spec) });
}

/**
 * `mend store migrate`: creates or upgrades the schema of a PostgreSQL store.
 * A JSONL store has no schema; it answers with nothing applied.
 */
export async function migrateStore(store: SessionStore): Promise<MigrationResult> {
  if (store.kind === 'postgres') return (store as PostgresSessionStore).migrate();
  return { applied: [], version: 0 };
}

/**
 * A home that is a file (or lies under one) cannot hold sessions: said at once as a store
 * error, rather than as "no sessions" on a listing and an internal error on the first write.
 * A home that does not exist yet is fine (the first write makes it).
 */
function checkHome(home: string): void {
  for (let dir = home; ; dir = dirname(dir)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(dir).isDirectory();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && dirname(dir) !== dir) continue;
      throw new MendError('store_unavailable', `the session home ${home} cannot be used: ${(error as Error).message}`, { home });
    }
    if (isDirectory) return;
    throw new MendError('store_unavailable', `the session home ${home} (MEND_HOME) is not a directory: ${dir} is a file`, { home });
  }
}
