/**
 * `mend repair PATH [--json]` through the built CLI (run `npm run build` first): the one
 * JSON object, the same plan id as `mend plan`, the new file beside the source under the
 * owner's naming, the source byte for byte, the owner's resume command with its directory,
 * and structured errors with the README's exit codes.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SYNTHETIC_RESULT_REASON } from '../../src/recovery/synthetic-result.js';
import { cleanupSandboxes, makeSandbox, mend, REPO_ROOT } from '../support/cli.js';

afterAll(cleanupSandboxes);

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function copyReal(agent: string, into: string): string {
  const dir = join(REPO_ROOT, 'fixtures/foreign-real', `${agent}-killed-mid-tool`);
  const file = readdirSync(dir).find((f) => f.endsWith('.jsonl'))!;
  cpSync(join(dir, file), join(into, file));
  return join(into, file);
}

describe('mend repair', () => {
  it('--json: one object; the plan of mend plan; a new Claude transcript named by its id beside the source', async () => {
    const sb = makeSandbox('repair');
    const source = copyReal('claude', sb.scratch);
    const before = sha(source);
    const plan = JSON.parse((await mend(sb, ['plan', source, '--json'])).stdout) as { planId: string };
    const run = await mend(sb, ['repair', source, '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]!) as Record<string, unknown> & {
      path: string;
      sessionId: string;
      resumeCommand: { cwd: string; argv: string[]; text: string };
    };
    expect(Object.keys(out).sort()).toEqual(['agent', 'path', 'planId', 'repairs', 'resumeCommand', 'sessionId', 'source'].sort());
    expect(out).toMatchObject({
      agent: 'claude',
      source,
      planId: plan.planId,
      repairs: [{ type: 'synthesized_tool_result', callId: 'toolu_mock_slow_1', name: 'Bash' }],
    });
    expect(isAbsolute(out.path)).toBe(true);
    expect(dirname(out.path)).toBe(sb.scratch);
    expect(basename(out.path)).toBe(`${out.sessionId}.jsonl`);
    expect(out.resumeCommand).toEqual({
      cwd: '/tmp/mend-peer-capture/claude/project',
      argv: ['claude', '--resume', out.sessionId],
      text: `cd /tmp/mend-peer-capture/claude/project && claude --resume ${out.sessionId}`,
    });
    expect(sha(source)).toBe(before);
    const written = readFileSync(out.path, 'utf8');
    expect(written.split(SYNTHETIC_RESULT_REASON).length - 1).toBe(1);
    // The copy plans clean of dangling calls.
    const again = JSON.parse((await mend(sb, ['plan', out.path, '--json'])).stdout) as { repairs: unknown[]; sessionId: string };
    expect(again.repairs).toEqual([]);
  });

  it('text: what it did, and the owner’s command with the directory it must run in', async () => {
    const sb = makeSandbox('repair');
    const source = copyReal('codex', sb.scratch);
    const run = await mend(sb, ['repair', source]);
    expect(run.exitCode, run.stderr).toBe(0);
    const id = /session\s+([0-9a-f-]{36})/.exec(run.stdout)?.[1];
    expect(id).toBeDefined();
    expect(run.stdout).toContain('answered call call_mock_slow_1 (exec_command) once');
    expect(run.stdout).toContain(`cd /tmp/mend-peer-capture/codex/project && codex exec resume ${id}`);
    expect(existsSync(join(sb.scratch, basename(source).replace(/[0-9a-f-]{36}(?=\.jsonl$)/, id!)))).toBe(true);
  });

  it('refuses mend’s own sessions (usage, 2) and files in no known format (session, 3), writing nothing', async () => {
    const sb = makeSandbox('repair');
    const own = join(sb.scratch, 'own.jsonl');
    cpSync(join(REPO_ROOT, 'fixtures/crashes/aborted-dangling-call/session.jsonl'), own);
    const r1 = await mend(sb, ['repair', own, '--json']);
    expect(r1.exitCode).toBe(2);
    expect(JSON.parse(r1.stdout)).toMatchObject({ error: { code: 'usage' } });
    const odd = join(sb.scratch, 'odd.jsonl');
    writeFileSync(odd, '{"hello":"world"}\n');
    const r2 = await mend(sb, ['repair', odd, '--json']);
    expect(r2.exitCode).toBe(3);
    expect(JSON.parse(r2.stdout)).toMatchObject({ error: { code: 'unknown_session_format' } });
    expect(r2.stderr).toContain('mend: error [unknown_session_format]');
    expect(readdirSync(sb.scratch).sort()).toEqual(['odd.jsonl', 'own.jsonl']);
  });

  it('reads a legacy whole-file Gemini session but does not repair it (usage, 2), writing nothing', async () => {
    const sb = makeSandbox('repair');
    const legacy = join(sb.scratch, 'session-2025-06-01T10-00-abcdef12.json');
    cpSync(join(REPO_ROOT, 'fixtures/foreign/gemini-legacy-json/session.json'), legacy);
    expect((await mend(sb, ['plan', legacy, '--json'])).exitCode).toBe(0);
    const run = await mend(sb, ['repair', legacy, '--json']);
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: 'usage', message: expect.stringContaining('legacy') } });
    expect(readdirSync(sb.scratch)).toEqual([basename(legacy)]);
  });
});
