/**
 * One ordered append path from the terminal UI: Shift+Tab pressed again and again while a
 * turn runs (40 list_directory calls, then an answer streamed slowly) must chain every
 * approval_mode_changed record after the turn's records, never beside them: one linear
 * chain, a clean plan, every recorded result kept, nothing synthesized.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadAndPlan } from '../../../src/runtime/load-and-plan.js';
import { openStore } from '../../../src/store/open-store.js';
import type { SessionStore } from '../../../src/store/session-store.js';
import { cleanupSandboxes } from '../../support/cli.js';
import { databasesForFile, describePostgres } from '../../support/postgres.js';
import { renderTui, tick } from './tui-harness.js';

afterAll(() => cleanupSandboxes());

const SHIFT_TAB = '\x1b[Z';
const CALLS = 40;

const database = databasesForFile('tuiorder');

async function shiftTabThroughATurn(store?: SessionStore): Promise<void> {
  const calls = Array.from({ length: CALLS }, (_, i) => ({ id: `call_${i}`, name: 'list_directory', args: { path: '.' } }));
  const tui = await renderTui({
    ...(store ? { store } : {}),
    approvalMode: 'auto-edit',
    script: [
      { text: 'listing', toolCalls: calls },
      { text: 'the listing is done and nothing else needs to run now', chunkSize: 4, delayMs: 15 },
    ],
  });
  try {
    await tui.type('list it forty times');
    let presses = 0;
    await tui.see('list it forty times');
    // Keep pressing while the turn runs (the footer's mode changes each time).
    while (tui.controller.getState().busy || presses === 0) {
      tui.stdin.write(SHIFT_TAB);
      presses++;
      await tick(5);
      if (presses > 2000) break;
    }
    await tui.see('the listing is done');
    expect(presses).toBeGreaterThan(3);

    const sessionId = tui.controller.getState().sessionId;
    const ref = await tui.deps.store.resolve({ projectRoot: tui.cwd, cwd: tui.cwd }, sessionId);
    const records = (await tui.deps.store.read(ref)).records.map((r) => r.record);
    const modeChanges = records.filter((r) => r.type === 'system' && r.subtype === 'approval_mode_changed');
    expect(modeChanges.length).toBeGreaterThan(3);
    const parents = new Map<string, number>();
    for (const r of records) if (r.parentUuid !== null) parents.set(r.parentUuid, (parents.get(r.parentUuid) ?? 0) + 1);
    expect(
      [...parents].filter(([, n]) => n > 1),
      'records sharing a parent',
    ).toEqual([]);
    records.forEach((r, i) => expect(r.parentUuid, `parent of record ${i}`).toBe(i === 0 ? null : records[i - 1]!.uuid));

    const { plan } = await loadAndPlan(tui.deps.store, ref, false, null);
    const tail = records.slice(-4).map((r) => `${r.type}${r.subtype ? `/${r.subtype}` : ''}`);
    expect(plan.kind, `the log ends ${tail.join(', ')}; the TUI shows ${JSON.stringify(tui.frame().slice(-400))}`).toBe('clean');
    const answered = plan.apiHistory.flatMap((c) => c.parts).filter((p) => p.functionResponse);
    expect(answered.map((p) => p.functionResponse!.id)).toEqual(calls.map((c) => c.id));
    expect(answered.every((p) => !('error' in (p.functionResponse!.response ?? {})))).toBe(true);
  } finally {
    await tui.close();
    if (store) await store.close();
  }
}

describe('terminal UI: mode changes while a turn runs (JSONL)', () => {
  it('Shift+Tab during a turn chains after the turn: one chain, a clean plan, every result kept', { timeout: 120_000 }, async () => {
    await shiftTabThroughATurn();
  });
});

await describePostgres('terminal UI: mode changes while a turn runs (PostgreSQL)', () => {
  it('Shift+Tab during a turn chains after the turn: one chain, a clean plan, every result kept', { timeout: 120_000 }, async () => {
    const db = await database();
    await shiftTabThroughATurn(await openStore(db.url, {}));
  });
});
