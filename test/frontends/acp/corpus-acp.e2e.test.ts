/**
 * The crash corpus through `mend --acp`, driven by the ACP SDK's own client:
 * `session/load` of each copied case replays the whole conversation before it
 * answers, the answer's `_meta.mend.recovery` agrees with the plan the core builds
 * in-process (kind, cause, plan id and the rest), and loading writes nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../../src/recovery/index.js';
import { SYNTHETIC_RESULT_REASON } from '../../../src/recovery/synthetic-result.js';
import { loadSession } from '../../../src/session/session-loader.js';
import type { Content } from '../../../src/session/records.js';
import { RecoverySummaryCamelSchema } from '../../../src/wire/recovery-summary.js';
import { withAcp, wireUpdates } from '../../support/acp.js';
import { cleanupSandboxes, makeSandbox, snapshotTree, summaryFromCamel, summaryFromCorePlan, trackTempDir } from '../../support/cli.js';
import { copyCase, listCorpus } from '../../support/corpus.js';

const cases = listCorpus();

afterAll(cleanupSandboxes);

/** What a replay must show, computed from the history as written (not with the product's replay code). */
function expectedReplay(history: readonly Content[]) {
  const results = new Map<string, Record<string, unknown>>();
  for (const entry of history) {
    for (const part of entry.parts) {
      const r = part.functionResponse;
      if (r?.id !== undefined && !results.has(r.id)) results.set(r.id, r.response);
    }
  }
  const calls: Array<{ id: string | undefined; status: string; outcomeUnknown: boolean }> = [];
  let agentText = '';
  let userText = '';
  for (const entry of history) {
    for (const part of entry.parts) {
      if (entry.role === 'model' && typeof part.text === 'string' && part.thought !== true) agentText += part.text;
      if (entry.role === 'user' && typeof part.text === 'string' && part.thought !== true) userText += part.text;
      const call = entry.role === 'model' ? part.functionCall : undefined;
      if (!call) continue;
      const result = call.id === undefined ? undefined : results.get(call.id);
      const unknown = result === undefined || result['error'] === SYNTHETIC_RESULT_REASON;
      calls.push({ id: call.id, status: unknown || result['error'] !== undefined ? 'failed' : 'completed', outcomeUnknown: unknown });
    }
  }
  return { calls, agentText, userText };
}

describe.concurrent('crash corpus through `mend --acp` session/load', { timeout: 60_000 }, () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const sb = makeSandbox(`acp-corpus-${c.name}`);
    const { dir, sessionPath } = copyCase(c);
    trackTempDir(dir);
    const before = readFileSync(sessionPath);
    const loaded = await loadSession(sessionPath);
    const plan = buildPlanForSession(loaded);

    const run = await withAcp(sb, {}, async (r) => {
      await r.initialize({ session: { notices: {} } });
      const answer = await r.agent.request(acp.methods.agent.session.load, { sessionId: sessionPath, cwd: sb.cwd, mcpServers: [] });
      // What the client had seen when the answer resolved: the replay is complete by then.
      const seenAtAnswer = r.updatesOf(sessionPath).filter((u) => u.sessionUpdate !== 'available_commands_update').length;
      const recovery = await r.agent.request<unknown>('_mend/session/recovery', { sessionId: sessionPath });
      return { answer, seenAtAnswer, recovery, wire: r.wire };
    });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const { answer, seenAtAnswer, recovery, wire } = run.value;

    // The answer's _meta.mend.recovery is the core's plan.
    const meta = (answer._meta as { mend: { recovery: unknown } }).mend;
    const summary = RecoverySummaryCamelSchema.parse(meta.recovery);
    expect(summary.recoveryKind).toBe(plan.kind);
    expect(summary.cause).toBe(plan.cause);
    expect(summary.planId).toBe(plan.planId);
    expect(summaryFromCamel(summary)).toEqual(summaryFromCorePlan(plan));
    expect(summary.recovered).toBe(plan.kind !== 'clean');
    expect(summary.history.records).toBe(loaded.conversation.totalRecords);
    expect(summary.history.apiEntries).toBe(plan.apiHistory.length);
    expect(summary.visibleNotice).toBe(plan.visibleNotice ?? null);
    if (c.expected) expect(summary.kind).toBe(c.expected.kind);
    expect(RecoverySummaryCamelSchema.parse(recovery)).toEqual(summary);
    expect(answer.modes?.currentModeId).toBe('default');

    // Every replayed update (and the notice) reached the wire before the answer.
    const answerAt = wire.findIndex((m) => !('method' in m) && (m['result'] as { _meta?: unknown } | undefined)?._meta !== undefined);
    expect(answerAt).toBeGreaterThan(0);
    const updates = wireUpdates(wire, sessionPath);
    const beforeAnswer = updates.filter((u) => u.index < answerAt).map((u) => u.update);
    const afterAnswer = updates.filter((u) => u.index > answerAt).map((u) => u.update);
    expect(afterAnswer.map((u) => u['sessionUpdate'])).toEqual(['available_commands_update']);
    expect(seenAtAnswer).toBe(beforeAnswer.length);

    // The notice comes last before the answer, carrying the visible notice and the same summary.
    const notices = beforeAnswer.filter((u) => u['sessionUpdate'] === 'notice');
    if (plan.visibleNotice !== undefined) {
      expect(notices).toHaveLength(1);
      expect(beforeAnswer.at(-1)).toBe(notices[0]);
      expect(notices[0]!['description']).toContain(plan.visibleNotice);
      expect((notices[0]!['_meta'] as { mend: { recovery: unknown } }).mend.recovery).toEqual(meta.recovery);
    } else {
      expect(notices).toEqual([]);
    }

    // The replay is the conversation as written: its text, and each call once with its real status.
    const replay = beforeAnswer.filter((u) => u['sessionUpdate'] !== 'notice');
    const want = expectedReplay(plan.originalApiHistory);
    const text = (kind: string) =>
      replay
        .filter((u) => u['sessionUpdate'] === kind)
        .map((u) => (u['content'] as { text?: string }).text ?? '')
        .join('');
    expect(text('agent_message_chunk')).toBe(want.agentText);
    expect(text('user_message_chunk')).toBe(want.userText);
    const calls = replay.filter((u) => u['sessionUpdate'] === 'tool_call');
    expect(calls).toHaveLength(want.calls.length);
    calls.forEach((u, i) => {
      const w = want.calls[i]!;
      if (w.id !== undefined) expect(u['toolCallId']).toBe(w.id);
      expect(u['status']).toBe(w.status);
      if (w.outcomeUnknown) expect(JSON.stringify(u['content'])).toContain('The outcome is unknown');
    });
    expect(replay.filter((u) => u['sessionUpdate'] === 'tool_call_update')).toEqual([]);

    // Loading never writes: the copy is byte-identical, no lock beside it, nothing under MEND_HOME.
    expect(readFileSync(sessionPath).equals(before)).toBe(true);
    expect(readdirSync(dirname(sessionPath))).toEqual(['session.jsonl']);
    expect(Object.entries(snapshotTree(sb.home)).filter(([, v]) => v !== 'dir')).toEqual([]);
  });
});
