/**
 * The owner-format writers of `mend repair`, in process, over every foreign session the
 * repository holds (the built corpus in fixtures/foreign and the real crashed sessions in
 * fixtures/foreign-real): the repaired text, read back by the same reader and planned by the
 * same planner, has no dangling call left and no damaged line; each call the plan answered
 * is answered exactly once, with mend's synthetic text; nothing but those answers was added;
 * the old session id is gone. And `repairForeignFile` leaves the source byte for byte.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ForeignAgent } from '../../src/foreign/adapter.js';
import { repairClaude } from '../../src/foreign/claude/repair-claude.js';
import { repairCodex } from '../../src/foreign/codex/repair-codex.js';
import { repairGemini } from '../../src/foreign/gemini/repair-gemini.js';
import { detectForeign } from '../../src/foreign/registry.js';
import { repairForeignFile } from '../../src/foreign/repair/repair-file.js';
import { answerSites } from '../../src/foreign/repair/dangling-calls.js';
import type { OwnerRepairWriter } from '../../src/foreign/repair/repair-types.js';
import { sourceLines } from '../../src/foreign/repair/source-lines.js';
import { foreignReadResult } from '../../src/foreign/to-read-result.js';
import { buildPlanForSession } from '../../src/recovery/build-plan.js';
import type { SessionRecoveryPlan } from '../../src/recovery/plan-types.js';
import { SYNTHETIC_RESULT_REASON } from '../../src/recovery/synthetic-result.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { REPO_ROOT } from '../support/peer-cli/peer-agents.js';

const WRITERS: Record<ForeignAgent, OwnerRepairWriter> = { claude: repairClaude, codex: repairCodex, gemini: repairGemini };
const NEW_ID = '0b6f7d8e-1c2a-4e5f-9a0b-1c2d3e4f5a6b';
const NOW = '2026-12-04T23:00:00.000Z';
const DAMAGE = new Set(['torn_tail', 'malformed_line', 'invalid_record', 'nul_bytes']);

interface Case {
  name: string;
  path: string;
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const root of ['fixtures/foreign', 'fixtures/foreign-real']) {
    const dir = join(REPO_ROOT, root);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const caseDir = join(dir, name);
      if (!statSync(caseDir).isDirectory()) continue;
      const file = readdirSync(caseDir).find((f) => f.endsWith('.jsonl'));
      if (file) out.push({ name: `${root.split('/')[1]}/${name}`, path: join(caseDir, file) });
    }
  }
  return out;
}

async function planOf(bytes: Buffer) {
  const adapter = detectForeign(bytes);
  if (!adapter) throw new Error('no reader recognises these bytes');
  const session = adapter.read(bytes);
  const read = await foreignReadResult({ ...session, sha256: createHash('sha256').update(bytes).digest('hex') });
  const plan: SessionRecoveryPlan = buildPlanForSession(buildConversation(read));
  return { agent: adapter.agent, session, plan };
}

/** Every function response to `callId` the history of a plan holds. */
function answersTo(plan: SessionRecoveryPlan, callId: string): unknown[] {
  return plan.originalApiHistory.flatMap((c) => c.parts.filter((p) => p.functionResponse?.id === callId).map((p) => p.functionResponse!.response));
}

const all = cases();
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

describe('owner-format repair writers', () => {
  it('finds the corpus', () => {
    expect(all.map((c) => c.name)).toEqual(
      expect.arrayContaining(['foreign-real/claude-killed-mid-tool', 'foreign-real/codex-killed-mid-tool', 'foreign-real/gemini-killed-mid-tool']),
    );
  });

  for (const c of all) {
    it(`${c.name}: repaired, read back and planned again`, async () => {
      const bytes = readFileSync(c.path);
      const { agent, session, plan } = await planOf(bytes);
      let n = 0;
      const repair = WRITERS[agent]({
        source: { path: c.path, bytes },
        session,
        plan,
        newSessionId: NEW_ID,
        now: NOW,
        newRowId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
      });
      const answered = plan.repairs.filter((r) => r.type === 'synthesized_tool_result').map((r) => r.callId);
      expect(repair.repairs.filter((r) => r.type === 'synthesized_tool_result').map((r) => r.callId)).toEqual(answered);

      const again = await planOf(Buffer.from(repair.text, 'utf8'));
      expect(again.agent).toBe(agent);
      expect(again.session.sessionId).toBe(NEW_ID);
      if (session.sessionId) expect(repair.text).not.toContain(session.sessionId);
      // Nothing dangles any more, nothing damaged was copied, and nothing else changed for the
      // planner: the plan's other repairs (a gap, a dropped duplicate) are the source's.
      expect(again.plan.repairs).toEqual(plan.repairs.filter((r) => r.type !== 'synthesized_tool_result'));
      expect(again.plan.kind === 'degraded_history').toBe(plan.kind === 'degraded_history');
      expect(again.plan.diagnostics.filter((d) => DAMAGE.has(d.code))).toEqual([]);
      // Codex's output has no error flag (the Responses API sends a string): the text is what counts.
      for (const callId of answered)
        expect(answersTo(again.plan, callId)).toEqual([agent === 'codex' ? { output: SYNTHETIC_RESULT_REASON } : { error: SYNTHETIC_RESULT_REASON }]);
      // Every damaged line of the source is reported as left out (or cleaned of its NULs).
      const damagedLines = session.diagnostics.filter((d) => DAMAGE.has(d.code) && 'line' in d).map((d) => (d as { line: number }).line);
      const reported = repair.repairs.flatMap((r) => (r.type === 'dropped_damaged_line' || r.type === 'removed_nul_bytes' ? [r.line] : []));
      expect([...new Set(reported)].sort()).toEqual([...new Set(damagedLines)].sort());
      // Nothing else was added: the source's readable rows, plus one row per answer (Gemini: one
      // later copy of each record whose calls were answered).
      const kept = sourceLines(bytes).kept.length;
      const sites = answerSites(plan, session);
      const added = repair.text.split('\n').filter(Boolean).length - kept;
      expect(added).toBe(agent === 'gemini' ? sites.length : answered.length);
      expect(occurrencesIn(repair.text, SYNTHETIC_RESULT_REASON)).toBe(answered.length);
      if (agent === 'codex') {
        // Ordinals count lines: still strictly one apart where the source had them.
        const ordinals = repair.text
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { ordinal?: unknown }).ordinal)
          .filter((o): o is number => typeof o === 'number');
        expect(ordinals.every((o, i) => i === 0 || o === ordinals[i - 1]! + 1)).toBe(true);
      }
    });
  }

  it('gemini: a call recorded without a result is answered by a later copy of its record (the last copy wins)', async () => {
    const lines = [
      {
        sessionId: '5e5e5e5e-0000-4000-8000-000000000001',
        projectHash: 'ab',
        startTime: '2026-12-04T10:00:00.000Z',
        lastUpdated: '2026-12-04T10:00:00.000Z',
        kind: 'main',
      },
      { id: 'u1', timestamp: '2026-12-04T10:00:01.000Z', type: 'user', content: [{ text: 'build it' }] },
      {
        id: 'm1',
        timestamp: '2026-12-04T10:00:02.000Z',
        type: 'gemini',
        content: '',
        toolCalls: [
          { id: 'run_shell_command-1-a', name: 'run_shell_command', args: { command: 'make' }, status: 'executing', timestamp: '2026-12-04T10:00:02.000Z' },
        ],
        model: 'gemini-2.5-pro',
      },
    ];
    const bytes = Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const path = '/home/dev/.gemini/tmp/proj/chats/session-2026-12-04T10-00-5e5e5e5e.jsonl';
    const { session, plan } = await planOf(bytes);
    expect(plan.repairs).toEqual([{ type: 'synthesized_tool_result', callId: 'run_shell_command-1-a', name: 'run_shell_command' }]);
    const repair = repairGemini({ source: { path, bytes }, session, plan, newSessionId: NEW_ID, now: NOW, newRowId: () => 'x' });
    expect(repair.path).toBe(`/home/dev/.gemini/tmp/proj/chats/session-2026-12-04T10-00-${NEW_ID.slice(0, 8)}.jsonl`);
    const rows = repair.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(4);
    expect(rows[3]).toEqual({
      ...lines[2],
      toolCalls: [
        {
          ...lines[2]!.toolCalls![0],
          status: 'error',
          result: [{ functionResponse: { id: 'run_shell_command-1-a', name: 'run_shell_command', response: { error: SYNTHETIC_RESULT_REASON } } }],
        },
      ],
    });
    const again = await planOf(Buffer.from(repair.text));
    expect(again.plan.repairs).toEqual([]);
    expect(answersTo(again.plan, 'run_shell_command-1-a')).toEqual([{ error: SYNTHETIC_RESULT_REASON }]);
  });

  it('repairForeignFile writes beside the source and leaves the source byte for byte', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mend-repair-'));
    temps.push(dir);
    cpSync(join(REPO_ROOT, 'fixtures/foreign-real/codex-killed-mid-tool'), dir, { recursive: true });
    const source = join(
      dir,
      readdirSync(dir).find((f) => f.endsWith('.jsonl'))!,
    );
    const before = readFileSync(source);
    const { plan } = await planOf(before);
    const repair = await repairForeignFile({ path: source, agent: 'codex', plan, sha256: createHash('sha256').update(before).digest('hex') });
    expect(readFileSync(source).equals(before)).toBe(true);
    expect(readFileSync(repair.path, 'utf8')).toBe(repair.text);
    expect(repair.path).toMatch(new RegExp(`/rollout-2026-12-04T22-25-53-${repair.sessionId}\\.jsonl$`));
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
    // A plan made from other bytes is refused, and nothing is written.
    await expect(repairForeignFile({ path: source, agent: 'codex', plan, sha256: '0'.repeat(64) })).rejects.toMatchObject({ code: 'stale_plan' });
    expect(readdirSync(dir).filter((f) => f.endsWith('.jsonl'))).toHaveLength(2);
  });
});

function occurrencesIn(text: string, needle: string): number {
  return text.split(needle).length - 1;
}
