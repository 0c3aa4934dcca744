/** The tool-name table and shell rules hosts written for Claude Code use. */
import { describe, expect, it } from 'vitest';
import { shellRuleMatches, toMendToolRule } from '../../src/wire/tool-aliases.js';

describe('toMendToolRule', () => {
  it("maps Claude's names, keeps mend's, and turns Bash rules into shell rules", () => {
    expect(['Read', 'Write', 'Edit', 'Bash', 'LS', 'Glob', 'Grep', 'read_file'].map((n) => toMendToolRule(n))).toEqual(
      ['read_file', 'write_file', 'edit', 'run_shell_command', 'list_directory', 'glob', 'grep_search', 'read_file'].map((rule) => ({ ok: true, rule })),
    );
    expect(toMendToolRule('Bash(git status:*)')).toEqual({ ok: true, rule: 'run_shell_command(git status:*)' });
    expect(toMendToolRule('Bash(*)')).toEqual({ ok: true, rule: 'run_shell_command' });
  });

  it('refuses patterns on tools other than the shell', () => {
    expect(toMendToolRule('Read(./src/**)')).toMatchObject({ ok: false, error: expect.stringContaining('cannot apply') });
    expect(toMendToolRule('WebFetch(domain:example.com)')).toMatchObject({ ok: false });
  });
});

describe('shellRuleMatches', () => {
  const rule = 'run_shell_command(git status:*)';
  it('matches a prefix on a word boundary', () => {
    expect(shellRuleMatches(rule, 'git status')).toBe(true);
    expect(shellRuleMatches(rule, '  git status --short ')).toBe(true);
    expect(shellRuleMatches(rule, 'git statusx')).toBe(false);
    expect(shellRuleMatches(rule, 'git log')).toBe(false);
  });
  it('never lets a second command ride along on a prefix', () => {
    for (const cmd of [
      'git status; rm -rf x',
      'git status && rm x',
      'git status | sh',
      'git status $(rm x)',
      'git status `rm x`',
      'git status > f',
      'git status\nrm x',
    ]) {
      expect(shellRuleMatches(rule, cmd)).toBe(false);
    }
  });
  it('matches an exact rule exactly, and nothing for other tools', () => {
    expect(shellRuleMatches('run_shell_command(npm test)', 'npm test')).toBe(true);
    expect(shellRuleMatches('run_shell_command(npm test)', 'npm test --watch')).toBe(false);
    expect(shellRuleMatches('read_file', 'npm test')).toBe(false);
  });
});
