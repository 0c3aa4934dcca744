/**
 * `mend repair` end to end with the real CLIs (Claude Code 2.1.333, Codex 0.171.0, Gemini CLI
 * 0.61.0), offline against loopback mocks of their model APIs. For each: the CLI runs a prompt
 * whose model answer is a slow shell command, is killed with SIGKILL while the command runs,
 * `mend repair` writes a new session, and the owner's CLI resumes it. The request the CLI then
 * sends must answer every call exactly once with mend's text (not Codex's `aborted`, not
 * Claude's own result, not dropped), and the command must not run again.
 *
 * Slow (a real CLI start-up or two each): one run per agent. A missing CLI skips the case with a
 * warning, and fails it under CI=true. Needs `npm run build` (runs dist/).
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, rmSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SYNTHETIC_RESULT_REASON } from '../../src/recovery/synthetic-result.js';
import { killMidTool, markerCount, peerSandbox, runToExit, type PeerSandbox } from '../support/peer-cli/drive-peer.js';
import { PEER_AGENTS, REPO_ROOT, type PeerAgent, type PeerAgentName } from '../support/peer-cli/peer-agents.js';
import { anthropicFacts, geminiFacts, occurrences, responsesFacts, type SentFacts } from '../support/peer-cli/request-facts.js';

const BIN = join(REPO_ROOT, 'bin', 'mend.js');
const PROMPT = 'Run the slow step.';
const TIMEOUT = 300_000;
const CALL_ID: Record<PeerAgentName, string | undefined> = { claude: 'toolu_mock_slow_1', codex: 'call_mock_slow_1', gemini: undefined };
const FACTS: Record<PeerAgentName, (body: unknown) => SentFacts> = { claude: anthropicFacts, codex: responsesFacts, gemini: geminiFacts };

interface RepairJson {
  agent: string;
  source: string;
  sessionId: string;
  path: string;
  resumeCommand: { cwd: string | null; argv: string[]; text: string };
  planId: string;
  repairs: Array<Record<string, unknown>>;
}

const sandboxes: PeerSandbox[] = [];
const durations: string[] = [];
afterAll(async () => {
  for (const sb of sandboxes) {
    await sb.mock.close();
    rmSync(sb.root, { recursive: true, force: true });
  }
  if (durations.length > 0) console.info(`repair with the real CLIs: ${durations.join(', ')}`);
});

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function mend(sb: PeerSandbox, args: string[]) {
  const env = { ...sb.env, MEND_HOME: join(sb.root, 'mend-home') };
  return runToExit(process.execPath, [BIN, ...args], { cwd: sb.layout.cwd, env, timeoutMs: 60_000 });
}

/** Kill mid-tool, repair, resume: what the owner's CLI sent on resume and what mend said. */
async function crashRepairResume(agent: PeerAgent) {
  const started = Date.now();
  const sb = await peerSandbox(agent);
  sandboxes.push(sb);
  const killed = await killMidTool(agent, sb, PROMPT, { sessionHolds: CALL_ID[agent.name] });
  expect(markerCount(sb.layout)).toBe(1);
  const before = readFileSync(killed.sessionFile);

  const planned = await mend(sb, ['plan', killed.sessionFile, '--json']);
  expect(planned.code, planned.stderr).toBe(0);
  const plan = JSON.parse(planned.stdout) as { planId: string; kind: string; agent: string; agentVersion: string | null };
  const repaired = await mend(sb, ['repair', killed.sessionFile, '--json']);
  expect(repaired.code, repaired.stderr).toBe(0);
  const out = JSON.parse(repaired.stdout) as RepairJson;
  expect(out.agent).toBe(agent.name);
  expect(out.planId).toBe(plan.planId);
  expect(out.source).toBe(realpathSync(killed.sessionFile));
  expect(isAbsolute(out.path)).toBe(true);
  expect(out.sessionId).not.toBe('');
  expect(out.resumeCommand.cwd).toBe(realpathSync(sb.layout.cwd));
  // The original is never modified.
  expect(sha(readFileSync(killed.sessionFile))).toBe(sha(before));
  // As mend wrote it (the owner's CLI appends to it on resume).
  const repairedText = readFileSync(out.path, 'utf8');

  const sent = sb.mock.requests.length;
  const resumed = await runToExit(agent.binary()!, agent.resumeArgs(out.sessionId, 'go on'), { cwd: out.resumeCommand.cwd!, env: sb.env, timeoutMs: 180_000 });
  expect(resumed.code, `${resumed.stdout.slice(-1500)}\n${resumed.stderr.slice(-1500)}`).toBe(0);
  const turns = sb.mock.requests.slice(sent).filter((r) => agent.isModelTurn(r));
  expect(turns.length).toBeGreaterThan(0);
  const facts = FACTS[agent.name](turns[0]!.body);
  // The original is still untouched after the owner's CLI resumed the copy.
  expect(sha(readFileSync(killed.sessionFile))).toBe(sha(before));
  durations.push(`${agent.name} ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { sb, plan, out, facts, repairedText };
}

function caseFor(name: PeerAgentName, body: (agent: PeerAgent) => Promise<void>) {
  const agent = PEER_AGENTS[name];
  if (agent.binary() === undefined) {
    if (process.env.CI === 'true') {
      it(`${name}: its CLI must be installed under CI`, () => {
        throw new Error(`${agent.displayName} ${agent.version} is not installed (npm install)`);
      });
    } else {
      console.warn(`SKIPPED: ${agent.displayName} ${agent.version} is not installed; mend repair's ${name} acceptance did not run`);
      it.skip(`${name} ${agent.version}: not installed`, () => {});
    }
    return;
  }
  it(`${name} ${agent.version}: killed mid-tool, repaired by mend, resumed by ${name}`, () => body(agent), TIMEOUT);
}

describe('mend repair, resumed by the owner’s real CLI', () => {
  for (const name of ['claude', 'codex'] as const) {
    caseFor(name, async (agent) => {
      const { sb, plan, out, facts } = await crashRepairResume(agent);
      const callId = CALL_ID[name]!;
      expect(plan.kind).toBe('interrupted_turn');
      expect(plan.agent).toBe(name);
      expect(plan.agentVersion).toBe(agent.version);
      expect(out.repairs).toContainEqual(expect.objectContaining({ type: 'synthesized_tool_result', callId }));
      // The call once, answered once, with mend's text: not Codex's `aborted`, not Claude's own result.
      expect(facts.calls.filter((c) => c.id === callId)).toHaveLength(1);
      expect(facts.answers.filter((a) => a.callId === callId)).toEqual([{ callId, text: SYNTHETIC_RESULT_REASON }]);
      expect(facts.answers.some((a) => a.text === 'aborted' || a.text.includes('[Tool call interrupted'))).toBe(false);
      expect(occurrences(facts.texts, SYNTHETIC_RESULT_REASON)).toBe(1);
      expect(occurrences(facts.texts, 'go on')).toBe(1);
      // The command did not run again.
      expect(markerCount(sb.layout)).toBe(1);
    });
  }

  caseFor('gemini', async (agent) => {
    const { sb, plan, out, facts, repairedText: repaired } = await crashRepairResume(agent);
    // Gemini CLI writes a call only once it finishes: the kill lost it, the prompt went unanswered.
    expect(plan.kind).toBe('interrupted_prompt');
    expect(plan.agent).toBe('gemini');
    expect(out.repairs.filter((r) => r['type'] === 'synthesized_tool_result')).toEqual([]);
    expect(repaired.split(PROMPT).length - 1).toBe(1);
    expect(repaired).not.toContain('run_shell_command');
    // Nothing pretends to know about the lost call; the prompt is sent once.
    expect(facts.calls).toEqual([]);
    expect(facts.answers).toEqual([]);
    expect(occurrences(facts.texts, PROMPT)).toBe(1);
    expect(occurrences(facts.texts, SYNTHETIC_RESULT_REASON)).toBe(0);
    expect(markerCount(sb.layout)).toBe(1);
  });
});
