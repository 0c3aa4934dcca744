/**
 * Crash injection for the reliability tests, read only here in the composition
 * root: MEND_FAULT=kill-after-write:N | torn-write:N:BYTES | fail-write:N[:ERRNO] |
 * fail-fsync:N[:ERRNO] (the N-th record is written, then its fsync fails).
 * N counts the records this process appends, from 1. Without the variable no
 * hook is installed, so the writer's hot path is unchanged.
 */
import type { WriteFaultHook } from '../session/log-writer.js';

export function faultHookFromEnv(spec: string | undefined, note: (msg: string) => void): WriteFaultHook | undefined {
  if (!spec) return undefined;
  const [kind = '', nText, extra] = spec.split(':');
  const n = Number(nText);
  if (!Number.isInteger(n) || n < 1) {
    note(`ignoring MEND_FAULT=${spec}: N must be a whole number >= 1`);
    return undefined;
  }
  const die = (): never => {
    process.kill(process.pid, 'SIGKILL');
    // SIGKILL is not delivered synchronously everywhere; make sure nothing else runs.
    for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
  };
  switch (kind) {
    case 'kill-after-write':
      return { afterWrite: (index) => void (index + 1 === n && die()) };
    case 'torn-write': {
      const bytes = Number(extra);
      if (!Number.isInteger(bytes) || bytes < 0) {
        note(`ignoring MEND_FAULT=${spec}: BYTES must be a whole number`);
        return undefined;
      }
      return {
        beforeWrite: (index, data) => (index + 1 === n ? data.subarray(0, Math.min(bytes, data.length - 1)) : undefined),
        afterWrite: (index) => void (index + 1 === n && die()),
      };
    }
    case 'fail-write':
      return { beforeWrite: (index) => (index + 1 === n ? { fail: extra || 'EIO' } : undefined) };
    case 'fail-fsync':
      return { beforeSync: (index) => (index + 1 === n ? { fail: extra || 'EIO' } : undefined) };
    default:
      note(`ignoring MEND_FAULT=${spec}: unknown fault ${kind}`);
      return undefined;
  }
}
