/**
 * The crash corpus through the terminal UI (design 5: "TUI /resume inserts an
 * INFO item after receiving a non-clean plan"; the same fixture gives the same
 * kind in the TUI as in the core). Resuming every case renders an INFO item
 * exactly when the core plan is not clean, naming the same kind, and loading
 * writes nothing to the log.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPlanForSession } from '../../../src/recovery/index.js';
import { loadSession } from '../../../src/session/session-loader.js';
import { copyCase, listCorpus } from '../../support/corpus.js';
import { cleanupSandboxes, trackTempDir } from '../../support/cli.js';
import { renderTui } from './tui-harness.js';

const cases = listCorpus();

afterAll(cleanupSandboxes);

describe('crash corpus through the terminal UI (resume)', () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { dir, sessionPath } = copyCase(c);
    trackTempDir(dir);
    const before = readFileSync(sessionPath);
    const plan = buildPlanForSession(await loadSession(sessionPath));

    const tui = await renderTui({ target: { type: 'resume', target: sessionPath } });
    try {
      if (before.length === 0) {
        // A file with no record whose name is no session id names no session to resume:
        // the UI says so and starts a new session elsewhere, never writing into that file.
        await tui.see('session_read_failed');
        expect(tui.controller.getState().sessionId).not.toBe('');
        expect(readFileSync(sessionPath).equals(before)).toBe(true);
        return;
      }
      const frame = await tui.see('resumed session');
      const infos = tui.controller.getState().view.done.filter((i) => i.type === 'info');
      if (plan.kind === 'clean') {
        expect(infos).toEqual([]);
        expect(frame).not.toContain('INFO');
      } else {
        expect(infos.map((i) => i.kind)).toEqual([plan.kind]);
        expect(frame).toContain(`INFO  ${plan.kind}`);
        expect(frame.match(/INFO {2}/g)).toHaveLength(1);
        expect(frame).toContain(plan.planId);
        if (plan.visibleNotice) expect(frame.replace(/[\s│]+/g, ' ')).toContain(plan.visibleNotice.replace(/\s+/g, ' '));
        if (plan.canContinue) expect(frame).toContain('/continue');
        if (plan.kind === 'degraded_history') expect(frame).toContain('Continuing is refused [continuation_refused]');
      }
      if (c.expected) expect(plan.kind).toBe(c.expected.kind);
    } finally {
      await tui.close();
    }
    // Loading never writes: the log is byte-identical once the UI has let go of it.
    expect(readFileSync(sessionPath).equals(before)).toBe(true);
  });
});
