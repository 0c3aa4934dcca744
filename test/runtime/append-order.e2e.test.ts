/**
 * One ordered append path per session, in process on both stores: approval-mode and
 * model changes made while a turn runs (the way a front end makes them, not awaited)
 * must chain after the turn's records, never beside them. The reproduction: a turn
 * with 60 list_directory calls while the mode is toggled 50 times; the plan then must
 * be clean, synthesize nothing and drop no recorded result, and no two records may
 * share a parent.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadAndPlan } from '../../src/runtime/load-and-plan.js';
import { SessionRuntime } from '../../src/runtime/session-runtime.js';
import type { ChatRecord } from '../../src/session/records.js';
import { openStore } from '../../src/store/open-store.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { cleanupSandboxes } from '../support/cli.js';
import { databasesForFile, describePostgres } from '../support/postgres.js';
import { defaultSettings, runtimeFixture } from '../support/runtime.js';

afterAll(() => cleanupSandboxes());
const database = databasesForFile('order');

const CALLS = 60;
const TOGGLES = 50;

/** Every record's parent is the record before it: one linear chain, no branch. */
export function expectLinearChain(records: readonly ChatRecord[]): void {
  const parents = new Map<string, number>();
  for (const r of records) if (r.parentUuid !== null) parents.set(r.parentUuid, (parents.get(r.parentUuid) ?? 0) + 1);
  const shared = [...parents].filter(([, n]) => n > 1);
  expect(shared, 'records sharing a parent').toEqual([]);
  records.forEach((r, i) => expect(r.parentUuid, `parent of record ${i} (${r.type})`).toBe(i === 0 ? null : records[i - 1]!.uuid));
}

async function toggleDuringTurn(store: SessionStore | undefined): Promise<void> {
  const calls = Array.from({ length: CALLS }, (_, i) => ({ id: `call_${i}`, name: 'list_directory', args: { path: '.' } }));
  const fixture = runtimeFixture([{ text: 'listing', toolCalls: calls }, { text: 'done' }], store ? { store } : {});
  const runtime = await SessionRuntime.open(fixture.deps, { target: { type: 'new' }, access: 'write', settings: { ...defaultSettings } });
  let toggles = 0;
  const pending: Array<Promise<void>> = [];
  runtime.subscribe((event) => {
    // A client toggling the mode while the tools run, as the front ends do: not awaited.
    if ((event.type === 'tool_call_started' || event.type === 'tool_call_finished') && toggles < TOGGLES) {
      toggles++;
      pending.push(runtime.setApprovalMode(toggles % 2 === 1 ? 'auto-edit' : 'default', 'test'));
      if (toggles % 10 === 0) runtime.setModel(`model-${toggles}`);
    }
  });
  const outcome = await runtime.prompt([{ text: 'list it 60 times' }]);
  await Promise.all(pending);
  expect(outcome.status).toBe('success');
  expect(toggles).toBe(TOGGLES);
  const ref = runtime.ref;
  await runtime.close();

  const read = await fixture.deps.store.read(ref);
  const records = read.records.map((r) => r.record);
  expectLinearChain(records);
  expect(records.filter((r) => r.type === 'system' && r.subtype === 'approval_mode_changed')).toHaveLength(TOGGLES);
  expect(records.filter((r) => r.type === 'system' && r.subtype === 'model_changed')).toHaveLength(TOGGLES / 10);
  const { plan } = await loadAndPlan(fixture.deps.store, ref, false, null);
  expect(plan.kind).toBe('clean');
  expect(plan.continuation?.syntheticCallIds ?? []).toEqual([]);
  const answered = plan.apiHistory.flatMap((c) => c.parts).filter((p) => p.functionResponse);
  expect(answered.map((p) => p.functionResponse!.id)).toEqual(calls.map((c) => c.id));
  expect(answered.every((p) => !('error' in (p.functionResponse!.response ?? {})))).toBe(true);
  await fixture.deps.store.close();
}

describe('one ordered append path (JSONL)', () => {
  it('60 tool calls while the approval mode is toggled 50 times: one chain, nothing synthesized, nothing dropped', { timeout: 60_000 }, async () => {
    await toggleDuringTurn(undefined);
  });
});

await describePostgres('one ordered append path (PostgreSQL)', () => {
  it('60 tool calls while the approval mode is toggled 50 times: one chain, nothing synthesized, nothing dropped', { timeout: 90_000 }, async () => {
    const db = await database();
    await toggleDuringTurn(await openStore(db.url, {}));
  });
});
