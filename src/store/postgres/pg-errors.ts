/**
 * Driver errors to stable codes. A server that cannot be reached, refuses the
 * login or drops the connection is `store_unavailable`, named by host and
 * database and never by password; everything else a statement raises is a
 * read or write failure of the session.
 */
import { MendError, isMendError } from '../../errors.js';
import { describeTarget, type PgTarget } from './pg-config.js';

/** SQLSTATE classes and codes that mean "the connection is gone or unusable", not "the statement is wrong". */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '28000', '28P01', '3D000']);

export function sqlstateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when retrying on a new connection may help (network errors, a terminated backend, a shutting-down server). */
export function isConnectionError(error: unknown): boolean {
  if (isMendError(error)) return error.code === 'store_unavailable';
  const code = sqlstateOf(error);
  if (code !== undefined && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')) return true;
  if (code !== undefined && /^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, ENOTFOUND …
  const message = error instanceof Error ? error.message : String(error);
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|Client was closed/i.test(message);
}

function scrub(message: string, target: PgTarget): string {
  return target.password ? message.split(target.password).join('***') : message;
}

export function unavailable(target: PgTarget, error: unknown, doing: string): MendError {
  const reason = scrub(error instanceof Error ? error.message : String(error), target);
  return new MendError(
    'store_unavailable',
    `PostgreSQL session store ${describeTarget(target)} is unavailable (${doing}): ${reason}`,
    { host: target.host, port: target.port, database: target.database, sqlstate: sqlstateOf(error) },
    { cause: error },
  );
}

/** Any error of a read: connection problems are store_unavailable, the rest session_read_failed. */
export function readError(target: PgTarget, error: unknown, doing: string): MendError {
  if (isMendError(error)) return error;
  if (isConnectionError(error) || CONNECTION_SQLSTATES.has(sqlstateOf(error) ?? '')) return unavailable(target, error, doing);
  return new MendError(
    'session_read_failed',
    `Could not read from PostgreSQL session store ${describeTarget(target)} (${doing}): ${scrub(String((error as Error)?.message ?? error), target)}`,
    { host: target.host, database: target.database, sqlstate: sqlstateOf(error) },
    { cause: error },
  );
}

export function writeError(target: PgTarget, error: unknown, doing: string): MendError {
  if (isMendError(error)) return error;
  if (isConnectionError(error) || CONNECTION_SQLSTATES.has(sqlstateOf(error) ?? '')) return unavailable(target, error, doing);
  return new MendError(
    'session_write_failed',
    `Could not write to PostgreSQL session store ${describeTarget(target)} (${doing}): ${scrub(String((error as Error)?.message ?? error), target)}`,
    { host: target.host, database: target.database, sqlstate: sqlstateOf(error) },
    { cause: error },
  );
}
