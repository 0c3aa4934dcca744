/** The command line Claude's Agent SDK builds, parsed (docs/compat-claude.md's flag table). */
import { describe, expect, it } from 'vitest';
import { parseArgs, type RunOptions } from '../../src/cli/args.js';

const CLAUDE = ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json'];

async function run(...args: string[]): Promise<RunOptions> {
  const parsed = await parseArgs([...CLAUDE, ...args]);
  if (parsed.command !== 'run') throw new Error(`not a run: ${parsed.command}`);
  return parsed.options;
}

describe("Claude's SDK command line", () => {
  it('asks the host only with --permission-prompt-tool=stdio; mend and Qwen hosts keep asking after initialize', async () => {
    expect((await run('--permission-prompt-tool=stdio')).permissionPrompts).toBe('stdio');
    expect((await run()).permissionPrompts).toBe('never');
    const mendHost = await parseArgs(['--input-format', 'stream-json', '--output-format', 'stream-json']);
    expect(mendHost.command === 'run' && mendHost.options.permissionPrompts).toBe('after_initialize');
    const qwenHost = await parseArgs(['--input-format', 'stream-json', '--output-format', 'stream-json', '--channel=SDK']);
    expect(qwenHost.command === 'run' && qwenHost.options.permissionPrompts).toBe('after_initialize');
    await expect(run('--permission-prompt-tool=mcp__x__ask')).rejects.toThrow(/not supported/);
  });

  it("maps Claude's permission modes, keeps the caller's word, refuses auto", async () => {
    expect(await run('--permission-mode=acceptEdits')).toMatchObject({ approvalMode: 'auto-edit', approvalModeName: 'acceptEdits' });
    expect(await run('--permission-mode=bypassPermissions', '--allow-dangerously-skip-permissions')).toMatchObject({ approvalMode: 'yolo' });
    expect(await run('--permission-mode=dontAsk')).toMatchObject({ approvalMode: 'default', approvalModeName: 'dontAsk' });
    await expect(run('--permission-mode=auto')).rejects.toThrow(/classifier/);
  });

  it('tools, disallowedTools and allowedTools in Claude names and rules', async () => {
    expect(await run('--tools=Read,Bash', '--disallowedTools=Bash(rm:*)', '--allowedTools=Bash(git status:*),Edit')).toMatchObject({
      coreTools: ['read_file', 'run_shell_command'],
      excludeTools: ['run_shell_command(rm:*)'],
      allowedTools: ['run_shell_command(git status:*)', 'edit'],
    });
    expect((await run('--tools=default')).coreTools).toBeUndefined();
    expect((await run('--tools=')).coreTools).toEqual([]);
    await expect(run('--allowedTools=Read(./x)')).rejects.toThrow(/cannot apply/);
  });

  it('resume wins over continue; --session-id with either is refused', async () => {
    expect(await run('--continue', '--resume=abc')).toMatchObject({ continue: false, resume: 'abc' });
    await expect(run('--continue', '--session-id=00000000-0000-4000-8000-000000000000')).rejects.toThrow(/--session-id/);
    await expect(run('--resume=abc', '--session-id=00000000-0000-4000-8000-000000000000')).rejects.toThrow(/--session-id/);
  });

  it('accepts and notes the ignorable flags; refuses the ones mend cannot honour', async () => {
    const o = await run(
      '--thinking=adaptive',
      '--max-thinking-tokens=10',
      '--thinking-display=summarized',
      '--effort=low',
      '--max-budget-usd=1',
      '--task-budget=5',
      '--betas=a,b',
      '--setting-sources=',
      '--settings',
      '{"a":1}',
      '--permission-prompts=x',
      '--channels=c',
      '--project-config-root=/x',
      '--plugin-dir=/p',
      '--plugin-dir-no-mcp=/q',
      '--initialize-fields=settings',
      '--await-initialize',
      '--strict-mcp-config',
      '--include-hook-events',
      '--session-mirror',
      '--managed-settings-in-initialize',
      '--fallback-model=m2',
      '--add-dir=/tmp',
      '--debug-file=/tmp/d.log',
      '--max-turns=3',
      '--model=m1',
      '--include-partial-messages',
    );
    expect(o.ignoredFlags).toEqual(expect.arrayContaining(['--thinking', '--effort', '--setting-sources', '--await-initialize']));
    expect(o).toMatchObject({ fallbackModel: 'm2', debug: true, debugFile: '/tmp/d.log', addDirs: ['/tmp'], maxTurns: 3, model: 'm1' });
    expect((await run('--no-session-persistence')).noSessionPersistence).toBe(true);
    await expect(run('--no-session-persistence', '--continue')).rejects.toThrow(/temporary store/);
    // MCP servers on the command line are started (test/mcp); --strict-mcp-config leaves the settings file's out.
    expect(await run('--mcp-config={"mcpServers":{}}', '--strict-mcp-config')).toMatchObject({ mcpConfigs: ['{"mcpServers":{}}'], strictMcpConfig: true });
    for (const flag of ['--json-schema={}', '--agent=x', '--resume-session-at=u', '--resume-drops-turn=true']) {
      await expect(run(flag), flag).rejects.toThrow(/not supported by mend/);
    }
  });
});
