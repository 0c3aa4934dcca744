import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SYSTEM_PROMPT_VERSION, buildSystemPrompt, type FrontEndKind, type SystemPromptInput } from '../../src/engine/system-prompt.js';
import { createToolRegistry } from '../../src/tools/registry.js';

/** The text of each version, recorded; MEND_UPDATE_GOLDEN=1 records a new version's text. */
const GOLDEN_FILE = join(import.meta.dirname, '../../fixtures/golden/system-prompt.json');
const update = process.env['MEND_UPDATE_GOLDEN'] === '1';
const FRONT_ENDS = Object.keys({ headless: 1, 'stream-json': 1, tui: 1, acp: 1, daemon: 1 } satisfies Record<FrontEndKind, 1>) as FrontEndKind[];

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

  it('has one text per SYSTEM_PROMPT_VERSION: a change of wording comes with a new version', () => {
    // Fixed tool declarations: the wording of the tools' own descriptions is theirs, not this file's.
    const tools = [
      { name: 'read_file', description: 'Reads a file.', parameters: {} },
      { name: 'run_shell_command', description: 'Runs a command.', parameters: {} },
    ];
    const prompts = Object.fromEntries(FRONT_ENDS.map((frontEnd) => [frontEnd, buildSystemPrompt({ ...input, tools, frontEnd })]));
    const recorded = existsSync(GOLDEN_FILE) ? (JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as { version: number; prompts: Record<string, string> }) : null;
    if (update) {
      // Recording a new text under the old number would let two wordings share one version.
      if (recorded?.version === SYSTEM_PROMPT_VERSION) expect(prompts, 'the text changed: bump SYSTEM_PROMPT_VERSION first').toEqual(recorded.prompts);
      writeFileSync(GOLDEN_FILE, `${JSON.stringify({ version: SYSTEM_PROMPT_VERSION, prompts }, null, 1)}\n`);
      return;
    }
    expect(recorded?.version, 'SYSTEM_PROMPT_VERSION changed: record its text (MEND_UPDATE_GOLDEN=1)').toBe(SYSTEM_PROMPT_VERSION);
    expect(prompts, 'the system prompt changed: bump SYSTEM_PROMPT_VERSION and record it (MEND_UPDATE_GOLDEN=1)').toEqual(recorded?.prompts);
  });
});
