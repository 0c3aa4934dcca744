/**
 * Where the PostgreSQL store connects: a `postgres://` URL (or the bare word
 * `postgres`), completed by libpq's `PG*` variables for whatever the URL leaves
 * out, exactly as psql would. The resolved target is described for messages as
 * `host:port/database` and never with the password.
 */
import type { ClientConfig, PoolConfig } from 'pg';
import { MendError } from '../../errors.js';

export interface PgTarget {
  host: string;
  port: number;
  database: string;
  user: string;
  /** Kept out of every message and error detail. */
  password: string | undefined;
  /** libpq `sslmode`; `disable` (the default here) means a plain connection. */
  sslmode: string;
  applicationName: string;
}

/** Timeouts and the pool bound; tests shrink the retry delays. */
export interface PgTuning {
  /** statement_timeout of every connection (ms). */
  statementTimeoutMs: number;
  /** How long to wait for a connection to open (ms). */
  connectTimeoutMs: number;
  /** The read pool never grows past this many connections. */
  poolMax: number;
  /** Reconnect attempts of a writer after a lost connection, and the first delay (doubled each time). */
  reconnectAttempts: number;
  reconnectBaseDelayMs: number;
  /** Records per keyset batch when a session is streamed. */
  readBatch: number;
}

export const DEFAULT_TUNING: PgTuning = {
  statementTimeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  poolMax: 4,
  reconnectAttempts: 5,
  reconnectBaseDelayMs: 200,
  readBatch: 5000,
};

export type Env = Readonly<Record<string, string | undefined>>;

/** Whether a store spec names PostgreSQL (`postgres`, `postgres://…`, `postgresql://…`). */
export function isPostgresSpec(spec: string): boolean {
  return spec === 'postgres' || spec === 'postgresql' || /^postgres(ql)?:\/\//i.test(spec);
}

/**
 * The URL's parts first, then PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD,
 * PGSSLMODE, PGAPPNAME, then libpq's defaults (local host, port 5432, the user
 * name as database). Query parameters `host`, `port`, `sslmode`,
 * `application_name` are honoured like libpq does (e.g. a socket directory).
 */
export function resolvePgTarget(spec: string, env: Env): PgTarget {
  if (!isPostgresSpec(spec)) throw new MendError('usage', `Not a PostgreSQL store: ${JSON.stringify(redactUrl(spec))}`);
  let url: URL | null = null;
  if (spec.includes('://')) {
    try {
      url = new URL(spec);
    } catch {
      throw new MendError('usage', `Malformed PostgreSQL URL: ${JSON.stringify(redactUrl(spec))}`);
    }
  }
  const param = (name: string): string | undefined => url?.searchParams.get(name) ?? undefined;
  const fromUrl = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : decodeURIComponent(value));
  const user = fromUrl(url?.username) ?? env.PGUSER ?? env.USER ?? 'postgres';
  const portText = fromUrl(url?.port) ?? param('port') ?? env.PGPORT ?? '5432';
  const port = Number(portText);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new MendError('usage', `Invalid PostgreSQL port ${JSON.stringify(portText)}`);
  const target = {
    host: fromUrl(url?.hostname) ?? param('host') ?? env.PGHOST ?? 'localhost',
    port,
    database: fromUrl(url?.pathname.replace(/^\//, '')) ?? param('dbname') ?? env.PGDATABASE ?? user,
    user,
    sslmode: param('sslmode') ?? env.PGSSLMODE ?? 'disable',
    applicationName: param('application_name') ?? env.PGAPPNAME ?? 'mend',
  } as PgTarget;
  // Not enumerable: a target that ends up in a log line or JSON dump shows no password.
  Object.defineProperty(target, 'password', { value: fromUrl(url?.password) ?? env.PGPASSWORD, enumerable: false });
  return target;
}

/** `host:port/database` for messages: no user, no password. */
export function describeTarget(target: PgTarget): string {
  return `${target.host}:${target.port}/${target.database}`;
}

/** A URL with its password replaced, for the rare message that repeats user input. */
export function redactUrl(spec: string): string {
  return spec.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
}

export function clientConfig(target: PgTarget, tuning: PgTuning): ClientConfig {
  const config: ClientConfig = {
    host: target.host,
    port: target.port,
    database: target.database,
    user: target.user,
    application_name: target.applicationName,
    connectionTimeoutMillis: tuning.connectTimeoutMs,
    statement_timeout: tuning.statementTimeoutMs,
    // A reader or writer that hangs inside a transaction must not hold row locks forever.
    idle_in_transaction_session_timeout: tuning.statementTimeoutMs,
    keepAlive: true,
  };
  if (target.password !== undefined) config.password = target.password;
  if (target.sslmode !== 'disable' && target.sslmode !== 'allow' && target.sslmode !== 'prefer') {
    // require / verify-*: libpq verifies the certificate only for verify-ca / verify-full.
    config.ssl = target.sslmode.startsWith('verify') ? true : { rejectUnauthorized: false };
  }
  return config;
}

export function poolConfig(target: PgTarget, tuning: PgTuning): PoolConfig {
  return { ...clientConfig(target, tuning), max: tuning.poolMax, idleTimeoutMillis: 10_000, allowExitOnIdle: true };
}
