/**
 * `mend sessions export ID`, `mend sessions import [FILE|-]` and `mend store migrate`:
 * moving a session between stores as ndjson (records byte-identical) and creating
 * or upgrading the PostgreSQL schema. Export and listing never write.
 */
import { open } from 'node:fs/promises';
import { MendError } from '../errors.js';
import type { Readable, Writable } from 'node:stream';
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { migrateStore } from '../store/open-store.js';
import { exportSession, importSession } from '../store/session-transfer.js';
import { ExitCode, exitCodeFor } from '../wire/exit-codes.js';
import { plural } from '../recovery/visible-notice.js';
import type { CommandIo } from './plan-command.js';

export type StoreCommand = { command: 'sessions-export'; target: string } | { command: 'sessions-import'; source: string } | { command: 'store-migrate' };

export async function storeCommand(args: StoreCommand, io: CommandIo & { stdin: NodeJS.ReadableStream }): Promise<number> {
  const { store, scope, identity } = io.runtime;
  try {
    switch (args.command) {
      case 'sessions-export': {
        const ref = await store.resolve(scope, args.target);
        const result = await exportSession(store, ref, io.stdout as Writable, { end: false });
        // The export is what can travel (exit 0); a line left behind is said, never silently dropped.
        for (const skipped of result.skipped.slice(0, MAX_LISTED_SKIPS)) {
          io.stderr.write(`mend: warning: line ${skipped.line} not exported: ${skipped.reason}\n`);
        }
        if (result.skipped.length > MAX_LISTED_SKIPS) io.stderr.write(`mend: warning: ${result.skipped.length - MAX_LISTED_SKIPS} more lines not exported\n`);
        if (result.skipped.length > 0) {
          io.stderr.write(
            `mend: exported ${plural(result.records, 'record')} of ${ref.sessionId || ref.location}; skipped ${plural(result.skipped.length, 'damaged line')} (mend plan shows them as malformed lines)\n`,
          );
        }
        return ExitCode.success;
      }
      case 'sessions-import': {
        // `-` (or nothing) is stdin, as the usage line `[FILE|-]` says.
        const input = (args.source === '-' || args.source === '' ? io.stdin : await openImportFile(args.source)) as Readable;
        const result = await importSession(store, scope, input, { who: identity });
        io.stderr.write(`mend: imported session ${result.ref.sessionId} (${plural(result.records, 'record')}) into ${store.kind}\n`);
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
    // A refused import names its bad lines one by one, as export names the lines it skipped.
    const bad = error instanceof MendError ? (error.details?.['badLines'] as { line: number; reason: string }[] | undefined) : undefined;
    for (const b of bad?.slice(0, MAX_LISTED_SKIPS) ?? []) io.stderr.write(`mend: line ${b.line} not imported: ${b.reason}\n`);
    io.stderr.write(`mend: error [${errorCodeOf(error)}]: ${errorMessageOf(error)}\n`);
    return exitCodeFor(errorCodeOf(error));
  }
}

/** Warnings listed one by one before a count stands for the rest. */
const MAX_LISTED_SKIPS = 20;

/** The import file, opened before anything else: one that cannot be read is the caller's mistake (usage), not an internal error. */
async function openImportFile(path: string): Promise<Readable> {
  let handle;
  try {
    handle = await open(path, 'r');
    if (!(await handle.stat()).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
  } catch (error) {
    await handle?.close();
    const e = error as NodeJS.ErrnoException;
    throw new MendError('usage', `cannot read the import file ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`, { path });
  }
  // The stream owns the handle (and closes it): a bare descriptor number left the FileHandle
  // to be closed again by the garbage collector (EBADF once the stream had closed it).
  return handle.createReadStream();
}
