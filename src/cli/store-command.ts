/**
 * `mend sessions export ID`, `mend sessions import [FILE|-]` and `mend store migrate`:
 * moving a session between stores as ndjson (records byte-identical) and creating
 * or upgrading the PostgreSQL schema. Export and listing never write.
 */
import { createReadStream } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { migrateStore } from '../store/open-store.js';
import { exportSession, importSession } from '../store/session-transfer.js';
import { ExitCode, exitCodeFor } from '../wire/exit-codes.js';
import type { CommandIo } from './plan-command.js';

export type StoreCommand = { command: 'sessions-export'; target: string } | { command: 'sessions-import'; source: string } | { command: 'store-migrate' };

export async function storeCommand(args: StoreCommand, io: CommandIo & { stdin: NodeJS.ReadableStream }): Promise<number> {
  const { store, scope, identity } = io.runtime;
  try {
    switch (args.command) {
      case 'sessions-export': {
        const ref = await store.resolve(scope, args.target);
        await exportSession(store, ref, io.stdout as Writable, { end: false });
        return ExitCode.success;
      }
      case 'sessions-import': {
        // `-` (or nothing) is stdin, as the usage line `[FILE|-]` says.
        const input = (args.source === '-' || args.source === '' ? io.stdin : createReadStream(args.source)) as Readable;
        const result = await importSession(store, scope, input, { who: identity });
        io.stderr.write(`mend: imported session ${result.ref.sessionId} (${result.records} records) into ${store.kind}\n`);
        io.stdout.write(`${JSON.stringify({ sessionId: result.ref.sessionId, records: result.records, store: store.kind })}\n`);
        return ExitCode.success;
      }
      case 'store-migrate': {
        const result = await migrateStore(store);
        io.stdout.write(`${JSON.stringify({ store: store.kind, applied: result.applied, version: result.version })}\n`);
        return ExitCode.success;
      }
    }
  } catch (error) {
    io.stderr.write(`mend: error [${errorCodeOf(error)}]: ${errorMessageOf(error)}\n`);
    return exitCodeFor(errorCodeOf(error));
  }
}
