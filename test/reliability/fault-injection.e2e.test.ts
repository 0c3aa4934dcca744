/**
 * MEND_FAULT crash injection against the built CLI, on the crash test's scenario
 * (test/support/crash-test-model.ts): a prompt whose first response makes three parallel
 * calls, the second two more, the third answers. A fault-free run appends 9 records:
 * user, assistant[r0], 3 results, assistant[r1], 2 results, assistant[r2].
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createScenarioSandbox, keyOf, nextRun, readCrashLog, readMarkers, expectedKind, tailState } from '../support/crash-test-core.js';
import { loadSession } from '../../src/session/session-loader.js';
import { buildPlanForSession } from '../../src/recovery/build-plan.js';
import { validateProviderHistory } from '../../src/recovery/validate-history.js';
import { transcript } from '../support/cli.js';
import { logLines, runScenario, scenarioBase, scenarioSandbox, structureOf } from '../support/reliability.js';

const FIRST_RUN = nextRun(false, []).records.map(keyOf);
const bases: string[] = [];
function base(label: string): string {
  const b = scenarioBase(label);
  bases.push(b);
  return b;
}
afterAll(() => {
  for (const b of bases) rmSync(b, { recursive: true, force: true });
});

async function planOf(path: string) {
  const loaded = await loadSession(path);
  const plan = buildPlanForSession(loaded);
  return { loaded, plan, valid: validateProviderHistory(plan.apiHistory) };
}

function resultLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((m) => m['type'] === 'result');
}

describe('MEND_FAULT', () => {
  it('without the variable nothing changes: no variable, unrelated variables, an empty one and a fault that never fires give the same log', async () => {
    const variants: Array<[string, Record<string, string>]> = [
      ['no MEND_FAULT', {}],
      ['unrelated variables', { FOO: 'bar', MEND_FAULTS: 'kill-after-write:1', MEND_FAULT_X: 'fail-write:1:ENOSPC' }],
      ['MEND_FAULT empty', { MEND_FAULT: '' }],
      ['armed, never reached', { MEND_FAULT: 'kill-after-write:1000' }],
    ];
    // One base per variant and the same sandbox id, so every path has the same length
    // (token counts in usageMetadata depend on the history's length).
    const runs = await Promise.all(
      variants.map(async ([label, env]) => {
        const sb = createScenarioSandbox(base('nochange'), 1);
        const r = await runScenario(sb, { env });
        const sanitized = sb.root.replace(/[^a-zA-Z0-9]/g, '-');
        const normalize = (text: string) => text.split(sb.root).join('<root>').split(sanitized).join('<sanitized-root>').split(sb.sessionId).join('<sid>');
        return {
          label,
          r,
          structure: structureOf(logLines(sb.logPath).map(normalize)),
          kinds: transcript(r.stdout).kinds,
          marker: readFileSync(sb.marker, 'utf8'),
        };
      }),
    );
    for (const run of runs) {
      expect(run.r.exitCode, run.label).toBe(0);
      expect(run.r.stderr, run.label).toBe('');
    }
    const [reference, ...others] = runs;
    expect((reference!.structure as Array<Record<string, unknown>>).length).toBe(FIRST_RUN.length);
    for (const other of others) {
      expect(other.structure, other.label).toEqual(reference!.structure);
      expect(other.kinds, other.label).toEqual(reference!.kinds);
      expect(other.marker, other.label).toBe(reference!.marker);
    }
  });

  it('kill-after-write:N is SIGKILL right after the N-th record this process appends, for every N', async () => {
    const b = base('kaw');
    const results = await Promise.all(
      FIRST_RUN.map(async (_, i) => {
        const n = i + 1;
        const sb = scenarioSandbox(b);
        const r = await runScenario(sb, { env: { MEND_FAULT: `kill-after-write:${n}` } });
        return { n, r, log: readCrashLog(sb.logPath) };
      }),
    );
    for (const { n, r, log } of results) {
      expect(r.signal, `N=${n}`).toBe('SIGKILL');
      expect(log.records.map(keyOf), `N=${n}`).toEqual(FIRST_RUN.slice(0, n));
      expect(log.tail.length, `N=${n}`).toBe(0);
      expect(log.malformed).toBe(0);
      expect(resultLines(r.stdout)).toEqual([]);
    }
  });

  it('torn-write:N:BYTES writes BYTES bytes of the N-th record, then SIGKILL; the next writer ends the torn line and keeps every byte', async () => {
    const cases: Array<[number, number]> = [
      [1, 0],
      [1, 25],
      [2, 300],
      [5, 57],
      [9, 1_000_000],
    ];
    const b = base('torn');
    await Promise.all(
      cases.map(async ([n, bytes]) => {
        const label = `torn-write:${n}:${bytes}`;
        const sb = scenarioSandbox(b);
        const r = await runScenario(sb, { env: { MEND_FAULT: label } });
        expect(r.signal, label).toBe('SIGKILL');
        const log = readCrashLog(sb.logPath);
        if (bytes >= 1_000_000) {
          // All but the newline: the record is whole, so it counts as written.
          expect(log.tailIsRecord, label).toBe(true);
          expect(log.records.map(keyOf), label).toEqual(FIRST_RUN.slice(0, n));
        } else {
          expect(log.records.map(keyOf), label).toEqual(FIRST_RUN.slice(0, n - 1));
          expect(log.tail.length, label).toBe(bytes);
          const tail = log.tail.toString('utf8');
          expect('{"uuid":"'.startsWith(tail) || tail.startsWith('{"uuid":"'), `${label}: ${tail}`).toBe(true);
        }
        const before = readFileSync(sb.logPath);
        const { plan, valid, loaded } = await planOf(sb.logPath);
        expect(valid, label).toEqual({ ok: true });
        expect(plan.kind, label).toBe(expectedKind(tailState(log.records)).kind);
        if (bytes > 0 && bytes < 1_000_000)
          expect(
            loaded.diagnostics.map((d) => d.code),
            label,
          ).toContain('torn_tail');

        const next = nextRun(true, log.records);
        const cont = await runScenario(sb, { mode: next.mode });
        expect(cont.exitCode, `${label}: ${cont.stderr}`).toBe(0);
        const after = readFileSync(sb.logPath);
        expect(after.subarray(0, before.length).equals(before), label).toBe(true);
        if (before.length > 0 && before.at(-1) !== 0x0a) expect(after[before.length], label).toBe(0x0a);
        const final = await planOf(sb.logPath);
        expect(final.plan.kind, label).toBe('clean');
        expect(final.valid, label).toEqual({ ok: true });
      }),
    );
  });

  it('fail-write:N:ENOSPC: store_unavailable, exactly one result line, exit 4; nothing runs after the failed write; the log loads and the session continues', async () => {
    const b = base('fail');
    await Promise.all(
      [1, 2, 3, 6, 9].map(async (n) => {
        const label = `fail-write:${n}:ENOSPC`;
        const sb = scenarioSandbox(b);
        const r = await runScenario(sb, { env: { MEND_FAULT: label } });
        expect(r.exitCode, label).toBe(4);
        const t = transcript(r.stdout);
        expect(t.result, label).toMatchObject({ is_error: true, error: { code: 'store_unavailable' } });
        expect(
          t.kinds.filter((k) => k === 'result'),
          label,
        ).toHaveLength(1);

        // The write that failed wrote nothing: N-1 whole records, no torn line.
        const log = readCrashLog(sb.logPath);
        expect(log.records.map(keyOf), label).toEqual(FIRST_RUN.slice(0, n - 1));
        expect(log.malformed + (log.tail.length > 0 ? 1 : 0), label).toBeLessThanOrEqual(1);

        // Tools whose result would come after the failed write never started.
        const ran = [...readMarkers(sb.marker).starts.keys()];
        const recorded = log.records.flatMap((rec) => (rec.t === 'result' ? [rec.id] : []));
        const pending = n >= 3 ? [FIRST_RUN[n - 1]!.replace('result:', '')] : [];
        for (const id of ran) expect([...recorded, ...pending], `${label}: ${id} ran`).toContain(id);

        if (log.exists) {
          const { plan, valid } = await planOf(sb.logPath);
          expect(valid, label).toEqual({ ok: true });
          expect(plan.kind, label).toBe(expectedKind(tailState(log.records)).kind);
        }

        const next = nextRun(log.exists, log.records);
        const cont = await runScenario(sb, { mode: next.mode });
        expect(cont.exitCode, `${label}: ${cont.stderr}`).toBe(0);
        expect((await planOf(sb.logPath)).plan.kind, label).toBe('clean');
        for (const [id, count] of readMarkers(sb.marker).starts) expect(count, `${label}: ${id}`).toBe(1);
      }),
    );
  });

  it('a new session whose first write fails leaves no file behind, so the same --session-id can be retried', async () => {
    // The writer is opened (O_CREAT|O_EXCL) before the first write fails; the store removes
    // the empty log, or a retry after a disk-full error would fail with session_exists.
    const sb = scenarioSandbox(base('first-write'));
    const r = await runScenario(sb, { env: { MEND_FAULT: 'fail-write:1:ENOSPC' } });
    expect(r.exitCode).toBe(4);
    expect(existsSync(sb.logPath), 'the failed first write left a log file').toBe(false);
    expect(r.stdout).toContain('ENOSPC');
    const retry = await runScenario(sb);
    expect(retry.exitCode, `retry: ${retry.stdout}`).toBe(0);
    expect(existsSync(sb.logPath) ? readFileSync(sb.logPath).length : 0, 'bytes left by the failed run').toBeGreaterThan(0);
  });

  it('fail-write in text and json mode: one error line on stderr / one result object, exit 4', async () => {
    const b = base('fail-fmt');
    const [text, json] = await Promise.all([
      runScenario(scenarioSandbox(b), { env: { MEND_FAULT: 'fail-write:3:ENOSPC' }, outputFormat: 'text' }),
      runScenario(scenarioSandbox(b), { env: { MEND_FAULT: 'fail-write:3:ENOSPC' }, outputFormat: 'json' }),
    ]);
    expect(text.exitCode).toBe(4);
    expect(text.stderr.split('\n').filter((l) => l.includes('error [store_unavailable]'))).toHaveLength(1);
    expect(json.exitCode).toBe(4);
    const lines = json.stdout.split('\n').filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'result', is_error: true, error: { code: 'store_unavailable' } });
  });

  it('a real partial write (file size limit, EFBIG) is cut back to the last whole line; the run stops with exit 4 and the session continues', async () => {
    const b = base('efbig');
    // ulimit -f counts 1024-byte blocks; SIGXFSZ is ignored so the write fails with EFBIG instead of killing.
    await Promise.all(
      [2, 5].map(async (blocks) => {
        const label = `ulimit -f ${blocks}`;
        const sb = scenarioSandbox(b);
        const r = await runScenario(sb, { shellPrefix: `trap '' XFSZ; ulimit -f ${blocks}` });
        expect(r.exitCode, `${label}: ${r.stderr}`).toBe(4);
        const t = transcript(r.stdout);
        expect(
          t.kinds.filter((k) => k === 'result'),
          label,
        ).toHaveLength(1);
        expect(t.result, label).toMatchObject({ is_error: true, error: { code: 'session_write_failed' } });
        expect(String(t.result.error?.message), label).toMatch(/too large|EFBIG/i);

        // The partial line the limit cut is taken back: the log ends with its last whole record.
        const before = readFileSync(sb.logPath);
        expect(before.length, label).toBeLessThan(blocks * 1024);
        expect(before.at(-1), label).toBe(0x0a);
        const log = readCrashLog(sb.logPath);
        expect(log.malformed, label).toBe(0);
        expect(log.tail.length, label).toBe(0);
        expect(log.records.map(keyOf), label).toEqual(FIRST_RUN.slice(0, log.records.length));
        const { plan, valid } = await planOf(sb.logPath);
        expect(valid, label).toEqual({ ok: true });
        expect(plan.kind, label).toBe(expectedKind(tailState(log.records)).kind);

        const next = nextRun(true, log.records);
        const cont = await runScenario(sb, { mode: next.mode });
        expect(cont.exitCode, `${label}: ${cont.stderr}`).toBe(0);
        const after = readFileSync(sb.logPath);
        expect(after.subarray(0, before.length).equals(before), label).toBe(true);
        const final = await planOf(sb.logPath);
        expect(final.plan.kind, label).toBe('clean');
        expect(final.valid, label).toEqual({ ok: true });
        expect(final.loaded.diagnostics.filter((d) => d.code === 'malformed_line').length, label).toBeLessThanOrEqual(1);
        for (const [id, count] of readMarkers(sb.marker).starts) expect(count, `${label}: ${id}`).toBe(1);
      }),
    );
  });

  it('an invalid MEND_FAULT is ignored with a note on stderr and the run is unchanged', async () => {
    const b = base('invalid');
    const specs = ['kill-after-write:0', 'torn-write:2:x', 'explode:1', 'kill-after-write:abc'];
    const runs = await Promise.all(specs.map((spec) => runScenario(scenarioSandbox(b), { env: { MEND_FAULT: spec } }).then((r) => ({ spec, r }))));
    for (const { spec, r } of runs) {
      expect(r.exitCode, spec).toBe(0);
      expect(r.stderr, spec).toContain(`mend[fault]: ignoring MEND_FAULT=${spec}`);
    }
  });
});
