import { describe, expect, it } from 'vitest';
import { DEFAULT_ACCEPT_COPIES, DEFAULT_SHELL_WORKERS, daemonAcceptCopies, daemonAppendMode, daemonShellWorkers } from '../../src/cli/daemon-env.js';

function read<T>(
  parse: (env: Record<string, string | undefined>, note: (m: string) => void) => T,
  env: Record<string, string | undefined>,
): { value: T; notes: string[] } {
  const notes: string[] = [];
  return { value: parse(env, (m) => notes.push(m)), notes };
}

describe("the daemon's switches from the environment", () => {
  it('defaults when unset or empty', () => {
    expect(read(daemonAcceptCopies, {})).toEqual({ value: DEFAULT_ACCEPT_COPIES, notes: [] });
    expect(read(daemonAcceptCopies, { MEND_ACCEPT_COPIES: '' })).toEqual({ value: DEFAULT_ACCEPT_COPIES, notes: [] });
    expect(read(daemonShellWorkers, {})).toEqual({ value: DEFAULT_SHELL_WORKERS, notes: [] });
    expect(read(daemonAppendMode, {})).toEqual({ value: 'queued', notes: [] });
  });

  it('takes 0 (off) and whole numbers up to the limit', () => {
    expect(read(daemonAcceptCopies, { MEND_ACCEPT_COPIES: '0' }).value).toBe(0);
    expect(read(daemonAcceptCopies, { MEND_ACCEPT_COPIES: '64' }).value).toBe(64);
    expect(read(daemonShellWorkers, { MEND_SHELL_WORKERS: '0' }).value).toBe(0);
    expect(read(daemonShellWorkers, { MEND_SHELL_WORKERS: '16' }).value).toBe(16);
    expect(read(daemonAppendMode, { MEND_APPEND_MODE: 'sync' }).value).toBe('sync');
  });

  it('ignores anything else with a note naming the variable', () => {
    for (const bad of ['-1', '65', '2.5', 'many']) {
      const { value, notes } = read(daemonAcceptCopies, { MEND_ACCEPT_COPIES: bad });
      expect(value).toBe(DEFAULT_ACCEPT_COPIES);
      expect(notes).toEqual([`ignoring MEND_ACCEPT_COPIES=${bad}: use a whole number from 0 to 64`]);
    }
    expect(read(daemonShellWorkers, { MEND_SHELL_WORKERS: '17' }).notes).toEqual(['ignoring MEND_SHELL_WORKERS=17: use a whole number from 0 to 16']);
    expect(read(daemonAppendMode, { MEND_APPEND_MODE: 'fast' }).value).toBe('queued');
  });
});
