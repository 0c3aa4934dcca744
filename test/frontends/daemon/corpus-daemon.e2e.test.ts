/**
 * The crash corpus through the built `mend serve`: every case placed in the
 * daemon's project, loaded with the real `@qwen-code/sdk` DaemonClient and
 * resumed with mend's daemon-backed SDK. Both answers must carry the plan the
 * core builds in-process from the same file (kind, cause, plan id and the rest
 * of the summary), and loading must write nothing.
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { DaemonClient, DaemonSessionClient } from '@qwen-code/sdk/daemon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../../src/recovery/index.js';
import { connect } from '../../../src/sdk/index.js';
import { loadSession } from '../../../src/session/session-loader.js';
import { RecoverySummaryCamelSchema, type RecoverySummaryCamel } from '../../../src/wire/recovery-summary.js';
import { cleanupSandboxes, logPathOf, makeSandbox, summaryFromCorePlan, summaryFromRecoveryLine, type Sandbox } from '../../support/cli.js';
import { copyCase, listCorpus, removeCopies } from '../../support/corpus.js';

import { startDaemon, stopAllDaemons, type Daemon } from './helpers.js';

afterAll(removeCopies);

const cases = listCorpus();
let sb: Sandbox;
let daemon: Daemon;

beforeAll(async () => {
  sb = makeSandbox('daemon-corpus');
  daemon = await startDaemon(sb);
});

afterAll(async () => {
  await stopAllDaemons();
  cleanupSandboxes();
});

/** The camelCase summary in the comparable shape of the CLI and SDK corpus tests. */
function comparable(summary: RecoverySummaryCamel) {
  return summaryFromRecoveryLine({
    plan_id: summary.planId,
    kind: summary.kind,
    cause: summary.cause,
    can_continue: summary.canContinue,
    can_auto_continue: summary.canAutoContinue,
    requires_user_confirmation: summary.requiresUserConfirmation,
    previous_attempts: summary.previousAttempts,
    repairs: summary.repairs,
    continuation: summary.continuation ? { mode: summary.continuation.mode, part_count: summary.continuation.partCount } : null,
  });
}

describe.concurrent('crash corpus through mend serve (Qwen DaemonClient load, mend SDK resume)', { timeout: 60_000 }, () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { sessionPath } = copyCase(c);
    const sessionId = (await loadSession(sessionPath)).conversation.sessionId || randomUUID();
    const placed = logPathOf(sb, sessionId);
    mkdirSync(sb.chats, { recursive: true });
    copyFileSync(sessionPath, placed);
    const before = readFileSync(placed);
    const loaded = await loadSession(placed);
    const plan = buildPlanForSession(loaded);
    const core = summaryFromCorePlan(plan);

    // Qwen's client: load replays and answers with the recovery summary at state._meta.mend.recovery and at top level.
    const qwen = new DaemonClient({ baseUrl: daemon.url });
    const raw = (await qwen.loadSession(sessionId, { workspaceCwd: sb.cwd })) as unknown as Record<string, unknown>;
    const meta = RecoverySummaryCamelSchema.parse((raw['state'] as { _meta: { mend: { recovery: unknown } } })._meta.mend.recovery);
    expect({ kind: meta.recoveryKind, cause: meta.cause, planId: meta.planId }).toEqual({ kind: plan.kind, cause: plan.cause, planId: plan.planId });
    expect(comparable(meta)).toEqual(core);
    expect(meta.history.records).toBe(loaded.conversation.totalRecords);
    expect(meta.history.apiEntries).toBe(plan.apiHistory.length);
    expect(raw['recovery']).toEqual(meta);
    expect(Array.isArray(raw['compactedReplay'])).toBe(true);
    expect(raw['liveJournal']).toEqual([]);
    if (c.expected) expect(meta.kind).toBe(c.expected.kind);
    const session = await DaemonSessionClient.resume(qwen, sessionId, { workspaceCwd: sb.cwd });
    expect(((await session.context()) as unknown as { recovery: unknown }).recovery).toEqual(meta);

    // mend's SDK: the recovery line, as the process-backed SDK gets it.
    const q = connect({ url: daemon.url }).query({ options: { resume: sessionId } });
    const recovery = await q.recovery;
    await q.close();
    expect(recovery).not.toBeNull();
    expect(summaryFromRecoveryLine(recovery!)).toEqual(core);
    expect(recovery!.action).toBe(plan.canContinue ? 'awaiting_confirmation' : 'none');

    // Nothing was written, and closing releases the lease.
    await session.close();
    expect(readFileSync(placed).equals(before)).toBe(true);
    expect(existsSync(`${placed}.lock`)).toBe(false);
  });
});
