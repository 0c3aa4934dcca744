import { describe, expect, it } from 'vitest';
import { SYSTEM_PROMPT_VERSION, buildSystemPrompt, type SystemPromptInput } from '../../src/engine/system-prompt.js';
import { createToolRegistry } from '../../src/tools/registry.js';

const input: SystemPromptInput = {
  projectRoot: '/work/app',
  extraRoots: ['/work/shared-lib'],
  platform: 'linux',
  date: '2026-12-01',
  tools: createToolRegistry().declarations(),
  mendVersion: '0.1.0',
};

describe('buildSystemPrompt', () => {
  it('tells the model where it is, what it has and what the boundaries are', () => {
    const prompt = buildSystemPrompt(input);
    for (const expected of [
      'You are mend 0.1.0',
      '- Project root: /work/app',
      '- Added directories: /work/shared-lib',
      '- Platform: linux',
      '- Date: 2026-12-01',
      '- read_file: Reads a text file.',
      '- glob: ',
      '- grep_search: ',
      '- run_shell_command: ',
      'may be absolute or relative to the project root (/work/app)',
      'only work inside the project root and the added directories',
      'run_shell_command is not confined',
      'never run again automatically',
      'the outcome is unknown',
      'Check the current state first',
    ]) {
      expect(prompt, expected).toContain(expected);
    }
    expect(SYSTEM_PROMPT_VERSION).toBeGreaterThanOrEqual(1);
  });

  it('is deterministic and reduces a Date to its UTC day', () => {
    expect(buildSystemPrompt(input)).toBe(buildSystemPrompt({ ...input, tools: [...input.tools] }));
    const fromDate = buildSystemPrompt({ ...input, date: new Date('2026-12-01T23:59:59Z') });
    expect(fromDate).toBe(buildSystemPrompt(input));
  });

  it('only speaks of the tools and roots that exist', () => {
    const bare = buildSystemPrompt({ ...input, extraRoots: [], tools: [] });
    expect(bare).toContain('No tools are available');
    expect(bare).not.toContain('Added directories');
    expect(bare).not.toContain('run_shell_command');
    const readOnly = buildSystemPrompt({ ...input, extraRoots: [], tools: input.tools.filter((t) => t.name === 'read_file') });
    expect(readOnly).toContain('Paths given to read_file may be absolute');
    expect(readOnly).toContain('only work inside the project root;');
    expect(readOnly).not.toContain('is not confined');
  });
});
