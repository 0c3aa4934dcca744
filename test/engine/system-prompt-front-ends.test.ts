/** The system prompt says what is true of the front end: only headless runs and programs have nobody to answer. */
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compose } from '../../src/cli/main.js';
import { buildSystemPrompt, type FrontEndKind } from '../../src/engine/system-prompt.js';

const base = { projectRoot: '/work/app', extraRoots: [], platform: 'linux', date: '2026-12-04', tools: [], mendVersion: '0.1.0' };

describe('the system prompt per front end', () => {
  it('says headless and nobody-answers only where that is true', () => {
    const text = (frontEnd: FrontEndKind) => buildSystemPrompt({ ...base, frontEnd });
    expect(buildSystemPrompt(base)).toBe(text('headless'));
    expect(text('headless')).toContain('running headless in a terminal');
    expect(text('headless')).toContain('Nobody can answer questions during a turn');
    expect(text('stream-json')).toContain('nobody answers questions during a turn');
    for (const kind of ['tui', 'acp', 'daemon'] as const) {
      expect(text(kind)).not.toContain('headless');
      expect(text(kind)).not.toMatch(/nobody can answer/i);
    }
    expect(text('tui')).toContain('interactive terminal UI');
    expect(text('tui')).toContain('end your answer with a short question');
    expect(text('acp')).toContain("inside the user's editor");
    expect(text('daemon')).toContain('over HTTP');
  });

  it('the composition root builds it for the front end it was given', async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'mend-prompt-')));
    const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: { MEND_HOME: home }, cwd: home, pid: process.pid };
    for (const [frontEnd, phrase] of [
      ['tui', 'interactive terminal UI'],
      ['acp', 'editor'],
      ['daemon', 'over HTTP'],
      [undefined, 'running headless'],
    ] as const) {
      const { runtime, store } = await compose(io, { provider: undefined, scriptedResponses: undefined, baseUrl: undefined, frontEnd });
      expect(runtime.baseSystemPrompt?.()).toContain(phrase);
      await store.close();
    }
  });
});
