/**
 * The foreign corpus through the terminal UI: resuming each case's file shows the INFO
 * item of its plan (kind and plan id of expected.json) exactly when the plan is not
 * clean, and `/resume` lists this project's sessions in the other agents' homes with an
 * agent column. Opening writes nothing.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, makeSandbox, snapshotTree, trackTempDir } from '../../support/cli.js';
import { copyForeignCase, listForeignCorpus, placeInHome, removeForeignCopies } from '../../support/foreign-corpus.js';
import { renderTui } from './tui-harness.js';

const cases = listForeignCorpus(true);

afterAll(() => {
  cleanupSandboxes();
  removeForeignCopies();
});

describe('foreign corpus through the terminal UI', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { dir, sessionPath } = copyForeignCase(c);
    trackTempDir(dir);
    const before = snapshotTree(dir);
    const e = c.expected;
    const tui = await renderTui({ target: { type: 'resume', target: sessionPath } });
    try {
      const frame = await tui.see('resumed session');
      const infos = tui.controller.getState().view.done.filter((i) => i.type === 'info');
      if (e.kind === 'clean') {
        expect(infos).toEqual([]);
      } else {
        expect(infos.map((i) => i.kind)).toEqual([e.kind]);
        expect(frame).toContain(`INFO  ${e.kind}`);
        expect(frame).toContain(e.planId);
      }
    } finally {
      await tui.close();
    }
    expect(snapshotTree(dir)).toEqual(before);
    expect(snapshotTree(tui.home)).toEqual({});
  });

  it('/resume lists the other agents’ sessions of this project with an agent column', async () => {
    const sb = makeSandbox('tui-foreign');
    const names = ['claude-killed-mid-tool', 'codex-turn-aborted', 'gemini-killed-tool-call'];
    for (const name of names) placeInHome(sb, name);
    const before = snapshotTree(sb.root);
    const homes = { claude: join(sb.root, '.claude'), codex: join(sb.root, 'codex-home'), gemini: join(sb.root, 'gemini-home', '.gemini') };
    const tui = await renderTui({ cwd: sb.cwd, home: sb.home, foreignHomes: homes });
    try {
      await tui.type('/resume');
      const picker = await tui.see('Resume a session of this project');
      expect(picker).toMatch(/claude {2}5b0c7a4e {2}interrupted_turn {2}cause unknown/);
      expect(picker).toMatch(/codex {3}019ad3c0 {2}interrupted_turn {2}cause aborted/);
      expect(picker).toMatch(/gemini {2}8c1d2e3f {2}interrupted_prompt {2}cause unknown/);
    } finally {
      await tui.close();
    }
    // The new session the TUI opened writes nothing before a prompt; the agents' files are untouched.
    expect(Object.fromEntries(Object.entries(snapshotTree(sb.root)).filter(([p]) => !p.startsWith('home')))).toEqual(
      Object.fromEntries(Object.entries(before).filter(([p]) => !p.startsWith('home'))),
    );
  });
});
