/**
 * A private PostgreSQL instance for a test that must crash the server (the shared one
 * at 5432 is never stopped): initdb into a temp folder, started with pg_ctl on a free
 * loopback port with the settings the test asks for, crashed with `-m immediate`,
 * restarted, and removed at the end. Runs as the `postgres` user (initdb refuses root).
 * Without the binaries the caller skips loudly (fails under CI=true).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PG_ROOT = '/usr/lib/postgresql';

export function postgresBinDir(): string | null {
  if (!existsSync(PG_ROOT)) return null;
  const versions = readdirSync(PG_ROOT)
    .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(PG_ROOT, versions[0], 'bin') : null;
}

/** Why a private instance cannot be made here, or null. */
export function privatePostgresUnavailable(): string | null {
  if (postgresBinDir() === null) return `no initdb/pg_ctl under ${PG_ROOT}`;
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'pipe' });
  } catch {
    return 'no postgres user to run initdb as';
  }
  if (process.getuid?.() !== 0) return 'not root (cannot run initdb as the postgres user)';
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface PrivatePostgres {
  url: string;
  port: number;
  /** `pg_ctl stop -m immediate`: a crash (no checkpoint, nothing flushed that was not already). */
  crash(): void;
  start(): void;
  /** Stops (immediately) and removes everything. Idempotent. */
  destroy(): void;
}

export async function startPrivatePostgres(settings: Record<string, string>): Promise<PrivatePostgres> {
  const bin = postgresBinDir()!;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  const root = mkdtempSync(join(tmpdir(), 'mend-pg-'));
  chownSync(root, uid, gid);
  const data = join(root, 'data');
  const as = (cmd: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { stdio: 'pipe', cwd: root, timeout: 120_000 });
  as('initdb', ['-D', data, '-A', 'trust', '-U', 'root', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = ['-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1', ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const start = () => void as('pg_ctl', ['-D', data, '-l', join(root, 'log'), '-o', options.join(' '), '-w', '-t', '60', 'start']);
  const stop = (mode: string) => void as('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  let running = false;
  start();
  running = true;
  return {
    url: `postgres://root@127.0.0.1:${port}/postgres`,
    port,
    crash() {
      stop('immediate');
      running = false;
    },
    start() {
      start();
      running = true;
    },
    destroy() {
      try {
        if (running) stop('immediate');
      } catch {
        // already down
      }
      running = false;
      rmSync(root, { recursive: true, force: true });
    },
  };
}
