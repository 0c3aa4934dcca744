/**
 * The foreign corpus through the built CLI: `mend plan PATH --json` and
 * `mend --resume PATH -o stream-json` (inspect) give each case's agent, version, kind,
 * cause and plan id, and write nothing anywhere (the whole sandbox, HOME included, is
 * snapshotted before and after). `sessions list --agent` finds the sessions in each
 * agent's home the way that agent names them; continuing copies the session into
 * mend's store and leaves the owner's file byte-identical.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY, cleanupSandboxes, makeSandbox, mend, snapshotTree, trackTempDir, transcript } from '../support/cli.js';
import { copyForeignCase, foreignHomeEnv, listForeignCorpus, placeInHome, removeForeignCopies } from '../support/foreign-corpus.js';
import { startOpenAIServer, textReply } from '../support/openai-server.js';

const cases = listForeignCorpus(true);

afterAll(() => {
  cleanupSandboxes();
  removeForeignCopies();
});

describe.concurrent('foreign corpus through `mend plan` and `mend --resume PATH` (inspect only)', { timeout: 60_000 }, () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const sb = makeSandbox(`foreign-${c.name}`);
    const { dir, sessionPath } = copyForeignCase(c);
    trackTempDir(dir);
    const before = { sandbox: snapshotTree(sb.root), source: snapshotTree(dir) };
    const e = c.expected;

    const plan = await mend(sb, ['plan', sessionPath, '--json']);
    expect(plan.stderr).toBe('');
    expect(plan.exitCode).toBe(0);
    const json = JSON.parse(plan.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ agent: e.agent, agentVersion: e.agentVersion, planId: e.planId, kind: e.kind, cause: e.cause, repairDetails: e.repairs });
    expect(json['source']).toMatchObject({ path: sessionPath, imported: false });

    const run = await mend(sb, ['--resume', sessionPath, '-o', 'stream-json']);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const t = transcript(run.stdout);
    expect(t.kinds).toEqual(['system:init', 'system:recovery', 'result']);
    expect(t.recovery).toMatchObject({ plan_id: e.planId, kind: e.kind, cause: e.cause, agent: e.agent, agent_version: e.agentVersion });

    // Nothing written: not the file, not its folder, not MEND_HOME, not HOME.
    expect(snapshotTree(dir)).toEqual(before.source);
    expect(snapshotTree(sb.root)).toEqual(before.sandbox);
  });
});

describe('sessions list --agent', { timeout: 60_000 }, () => {
  it("lists this project's sessions in each agent's home, with agent, kind, cause, size and plan id, and writes nothing", async () => {
    const sb = makeSandbox('foreign-list');
    const names = ['claude-killed-mid-tool', 'codex-turn-aborted', 'gemini-killed-tool-call', 'gemini-legacy-json'];
    const paths = names.map((n) => placeInHome(sb, n));
    const env = foreignHomeEnv(sb);
    const before = snapshotTree(sb.root);

    const all = await mend(sb, ['sessions', 'list', '--agent', 'all', '--json'], { env });
    expect(all.stderr).toBe('');
    const rows = JSON.parse(all.stdout) as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(names.length);
    for (const [i, name] of names.entries()) {
      const c = cases.find((x) => x.name === name)!;
      const row = rows.find((r) => r['path'] === paths[i])!;
      expect(row, name).toMatchObject({
        agent: c.expected.agent,
        kind: c.expected.kind,
        cause: c.expected.cause,
        planId: c.expected.planId,
        size: readFileSync(paths[i]!).length,
      });
    }

    const codex = await mend(sb, ['sessions', 'list', '--agent', 'codex', '--json'], { env });
    expect((JSON.parse(codex.stdout) as Array<{ agent: string }>).map((r) => r.agent)).toEqual(['codex']);
    const text = await mend(sb, ['sessions', 'list', '--agent', 'claude'], { env });
    expect(text.stdout).toContain('claude');
    expect(text.stdout).toContain('interrupted_turn');
    // Another project's sessions are not this one's.
    const other = makeSandbox('foreign-list-other');
    const none = await mend(other, ['sessions', 'list', '--agent', 'all', '--json'], { env: { ...env, HOME: sb.root } });
    expect(JSON.parse(none.stdout)).toEqual([]);

    expect(snapshotTree(sb.root)).toEqual(before);
  });
});

describe('continuing another agent’s session in mend', { timeout: 60_000 }, () => {
  it('copies it into a new mend session with its provenance, keeps call ids, maps tool names, and never touches the file', async ({ onTestFinished }) => {
    const server = await startOpenAIServer();
    onTestFinished(() => server.close());
    const sb = makeSandbox('foreign-continue');
    const c = cases.find((x) => x.name === 'claude-killed-mid-tool')!;
    const { dir, sessionPath } = copyForeignCase(c);
    trackTempDir(dir);
    const bytes = readFileSync(sessionPath);
    server.enqueue(textReply('I will check whether the build finished before anything else.'));

    const run = await mend(
      sb,
      ['--resume', sessionPath, '--continue-interrupted', '-o', 'stream-json', '--base-url', server.baseURL, '--model', 'test-model'],
      {
        env: { OPENAI_API_KEY: API_KEY, MEND_OPENAI_MAX_RETRIES: '0' },
      },
    );
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const t = transcript(run.stdout);
    expect(t.result).toMatchObject({ subtype: 'success' });
    // The recovery line names the copy's plan and where it came from.
    expect(t.recovery).toMatchObject({ kind: 'interrupted_turn', agent: 'claude', agent_version: '2.1.336', action: 'continue' });
    const source = (t.recovery as { source: Record<string, unknown> }).source;
    expect(source).toMatchObject({ path: sessionPath, imported: true, plan_id: c.expected.planId, session_id: '5b0c7a4e-0f43-4f6e-9b7d-1f2a3b4c5d01' });
    expect(source['sha256']).toMatch(/^[0-9a-f]{64}$/);
    const newId = t.init.session_id;
    expect(newId).not.toBe('5b0c7a4e-0f43-4f6e-9b7d-1f2a3b4c5d01');

    // What the provider got: Claude's call id, mend's tool name, mend's synthetic result, the thought not sent as text.
    const messages = server.requests[0]!.body.messages;
    const call = messages.flatMap((m) => m.tool_calls ?? []);
    expect(call).toHaveLength(1);
    expect(call[0]).toMatchObject({ id: 'toolu_01Kill', function: { name: 'run_shell_command' } });
    expect(JSON.parse(call[0]!.function.arguments)).toMatchObject({ command: 'echo start; sleep 30; echo end' });
    const result = messages.find((m) => m.role === 'tool');
    expect(result).toMatchObject({ tool_call_id: 'toolu_01Kill' });
    expect(String(result!.content)).toContain('outcome is unknown');

    // The owner's file is byte-identical; the copy is a mend session whose plan carries the provenance.
    expect(readFileSync(sessionPath).equals(bytes)).toBe(true);
    const plan = await mend(sb, ['plan', newId, '--json']);
    const json = JSON.parse(plan.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ sessionId: newId, agent: 'claude', kind: 'clean', source: { imported: true, planId: c.expected.planId, path: sessionPath } });
  });

  it('a plain prompt on a Codex rollout runs in a mend copy, exec_command as run_shell_command', async ({ onTestFinished }) => {
    const server = await startOpenAIServer();
    onTestFinished(() => server.close());
    const sb = makeSandbox('foreign-prompt');
    const c = cases.find((x) => x.name === 'codex-function-call-no-output')!;
    const { dir, sessionPath } = copyForeignCase(c);
    trackTempDir(dir);
    const bytes = readFileSync(sessionPath);
    server.enqueue(textReply('Checked.'));
    const run = await mend(sb, ['--resume', sessionPath, '-p', 'did it finish?', '-o', 'stream-json', '--base-url', server.baseURL, '--model', 'test-model'], {
      env: { OPENAI_API_KEY: API_KEY, MEND_OPENAI_MAX_RETRIES: '0' },
    });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const messages = server.requests[0]!.body.messages;
    expect(messages.flatMap((m) => m.tool_calls ?? [])).toMatchObject([{ id: 'call_c1Build', function: { name: 'run_shell_command' } }]);
    expect(messages.at(-1)).toMatchObject({ role: 'user', content: 'did it finish?' });
    expect(readFileSync(sessionPath).equals(bytes)).toBe(true);
  });
});
