/**
 * The terminal UI in process (ink-testing-library) on a real runtime, JSONL
 * store and scripted model: streaming, thoughts, tool calls, the footer,
 * approvals, the approval-mode key, Ctrl-C / Ctrl-D, and narrow terminals.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupSandboxes, readLog, sessionFiles, waitFor } from '../../support/cli.js';
import { renderTui, tick, type TuiHarness } from './tui-harness.js';

const KEY = { enter: '\r', shiftTab: '\x1b[Z', ctrlC: '\x03', ctrlD: '\x04', ctrlO: '\x0f', up: '\x1b[A' };

afterAll(cleanupSandboxes);

function logOf(tui: TuiHarness): string {
  return join(tui.home, 'projects', tui.cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats', `${tui.controller.getState().sessionId}.jsonl`);
}

describe('terminal UI', () => {
  it('streams the answer, shows thoughts dimmed and collapsed, a tool call with args, status and trimmed output, and the footer', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n');
    const tui = await renderTui({
      approvalMode: 'yolo',
      script: [
        {
          thought: 'I should list the numbers.\nThen answer.',
          text: 'Let me print them.',
          toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: `printf '${lines}\\n'` } }],
        },
        { text: 'Printed twelve lines.' },
      ],
    });
    try {
      await tui.type('print twelve lines');
      const frame = await tui.see('Printed twelve lines.');
      expect(frame).toContain('> print twelve lines');
      expect(frame).toContain('✻ I should list the numbers. …  (ctrl-o: thoughts)');
      expect(frame).not.toContain('Then answer.');
      expect(frame).toMatch(/✔ run_shell_command \{"command":"printf/);
      expect(frame).toContain('[done]');
      expect(frame).toContain('│ line 6');
      expect(frame).not.toContain('│ line 7');
      expect(frame).toContain('… 6 more lines');
      expect(frame).toMatch(/tokens \d+ in \/ \d+ out/);
      expect(frame).toContain('model scripted');
      expect(frame).toContain('mode yolo');
      expect(frame).toContain(`session ${tui.controller.getState().sessionId}`);
      // Ctrl-O redraws the finished items with the thoughts in full.
      await tui.key(KEY.ctrlO);
      expect(await tui.see('Then answer.')).toContain('I should list the numbers.');
    } finally {
      await tui.close();
    }
  });

  it('asks before a shell command: allow once, allow always for this session, deny', async () => {
    const tui = await renderTui({
      script: [
        { toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: 'echo first' } }] },
        { toolCalls: [{ id: 'c2', name: 'run_shell_command', args: { command: 'echo second' } }] },
        { toolCalls: [{ id: 'c3', name: 'run_shell_command', args: { command: 'echo third' } }] },
        { text: 'done' },
      ],
    });
    try {
      await tui.type('go');
      expect(await tui.see('Allow run_shell_command?')).toContain('[y] allow once   [a] allow always for this session   [n] deny');
      await tui.key('y');
      await tui.see('│ first');
      await tui.see('Allow run_shell_command?');
      await tui.key('a');
      await tui.see('│ second');
      // Allowed for the session: the third call does not ask.
      await tui.see('✦ done');
      expect(tui.frame()).toContain('│ third');
    } finally {
      await tui.close();
    }

    const denied = await renderTui({
      script: [{ toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: 'echo nope' } }] }, { text: 'ok, not running it' }],
    });
    try {
      await denied.type('go');
      await denied.see('Allow run_shell_command?');
      await denied.key('n');
      const frame = await denied.see('ok, not running it');
      expect(frame).toContain('[denied]');
      expect(frame).not.toContain('│ nope');
    } finally {
      await denied.close();
    }
  });

  it('Shift+Tab cycles the approval mode', async () => {
    const tui = await renderTui();
    try {
      expect(tui.frame()).toContain('mode default');
      for (const mode of ['auto-edit', 'yolo', 'plan', 'default']) {
        await tui.key(KEY.shiftTab);
        await tui.see(`mode ${mode}`);
      }
    } finally {
      await tui.close();
    }
  });

  it('Ctrl-C stops the running turn (recorded as aborted); a second Ctrl-C on the idle prompt exits', async () => {
    const tui = await renderTui({ script: [{ text: 'thinking about it', stallMs: 'forever', chunkSize: 100 }] });
    await tui.type('take your time');
    await tui.see('thinking about it');
    await tui.key(KEY.ctrlC);
    await tui.see('turn aborted (interrupt); recorded in the log');
    const records = readLog(logOf(tui));
    expect(records.some((r) => r.type === 'system' && r.subtype === 'turn_aborted')).toBe(true);
    await tui.key(KEY.ctrlC);
    await tui.see('Press Ctrl-C again to exit');
    expect(tui.controller.getState().exited).toBe(false);
    await tui.key(KEY.ctrlC);
    await tui.controller.exited;
    // The lease is released on exit.
    expect(existsSync(`${logOf(tui)}.lock`)).toBe(false);
    await tui.close();
  });

  it('a prompt typed while a turn runs is queued and runs next', async () => {
    const tui = await renderTui({ script: [{ text: 'first answer', chunkSize: 4, delayMs: 40 }, { text: 'second answer' }] });
    try {
      await tui.type('one');
      await tui.see('✦ firs');
      await tui.type('two');
      await tui.see('queued: it runs when the current turn ends');
      const frame = await tui.see('second answer');
      expect(frame.indexOf('first answer')).toBeLessThan(frame.indexOf('> two'));
    } finally {
      await tui.close();
    }
  });

  it('Ctrl-D on an empty prompt exits; with text typed it does not', async () => {
    const tui = await renderTui();
    await tui.type('half a thought', false);
    await tui.key(KEY.ctrlD);
    await tick();
    expect(tui.controller.getState().exited).toBe(false);
    await tui.key(KEY.ctrlC); // clears the typed line
    await waitFor(() => !tui.frame().includes('half a thought'), 5000, 'the line to be cleared');
    await tui.key(KEY.ctrlD);
    await tui.controller.exited;
    await tui.close();
  });

  it('up recalls the previous prompt; a multi-line prompt is sent as one', async () => {
    const tui = await renderTui({ script: [{ text: 'one' }, { text: 'two' }] });
    try {
      await tui.type('first line\\');
      await tui.type('second line');
      await tui.see('✦ one');
      const [log] = sessionFiles({ chats: join(tui.home, 'projects', tui.cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats') } as never);
      const prompt = readLog(log!).find((r) => r.type === 'user');
      expect(prompt).toMatchObject({ message: { parts: [{ text: 'first line\nsecond line' }] } });
      await tui.key(KEY.up);
      await tui.see(/> first line\s*│?\s*\n.*second line/);
    } finally {
      await tui.close();
    }
  });

  it('a multi-line paste stays in the prompt until Enter', async () => {
    const tui = await renderTui({ script: [{ text: 'got both lines' }] });
    try {
      await tui.key('pasted one\rpasted two\r');
      await tui.see('pasted two');
      expect(tui.frame()).not.toContain('got both lines');
      await tui.key(KEY.enter);
      await tui.see('got both lines');
      const chats = join(tui.home, 'projects', tui.cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
      const [log] = sessionFiles({ chats } as never);
      expect(readLog(log!).find((r) => r.type === 'user')).toMatchObject({ message: { parts: [{ text: 'pasted one\npasted two\n' }] } });
    } finally {
      await tui.close();
    }
  });

  it('editing keys in one chunk (tmux, ssh, fast typing) edit the line; Ctrl-W deletes a word', async () => {
    const tui = await renderTui({ script: [{ text: 'sent' }] });
    try {
      await tui.key('world\x01hello \x05 again prod\x17');
      await tui.key('\x17');
      await tui.key('now\r');
      await tui.see('✦ sent');
      const chats = join(tui.home, 'projects', tui.cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
      const [log] = sessionFiles({ chats } as never);
      expect(readLog(log!).find((r) => r.type === 'user')).toMatchObject({ message: { parts: [{ text: 'hello world now' }] } });
    } finally {
      await tui.close();
    }
  });

  it('renders in a 40-column terminal without a line wider than 40', async () => {
    const tui = await renderTui({
      columns: 40,
      approvalMode: 'yolo',
      script: [
        {
          text: 'A fairly long answer that has to wrap inside forty columns without overflowing.',
          toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: 'echo a-very-long-output-line-that-would-never-fit-in-forty-columns-at-all' } }],
        },
        { text: 'ok' },
      ],
    });
    try {
      await tui.type('go');
      const frame = await tui.see('✦ ok');
      for (const line of frame.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(40);
      expect(frame).toContain('[done]');
    } finally {
      await tui.close();
    }
  });

  it('a long streaming answer keeps the live region within the screen; the finished answer is complete', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `row ${i + 1}`).join('\n');
    const tui = await renderTui({ script: [{ text, chunkSize: 10_000, stallMs: 'forever' }] });
    try {
      await tui.type('long please');
      const live = await tui.see('row 40');
      expect(live).toContain('earlier rows shown when the answer is complete');
      expect(live).not.toMatch(/\brow 1\n/);
      await tui.key(KEY.ctrlC);
      const done = await tui.see('turn aborted');
      expect(done).toMatch(/\brow 1\n/);
      expect(done).not.toContain('earlier rows');
    } finally {
      await tui.close();
    }
  });

  it('/help, /model, unknown commands', async () => {
    const tui = await renderTui();
    try {
      await tui.type('/help');
      expect(await tui.see('HELP  commands and keys')).toContain('/continue');
      await tui.type('/model other-model');
      await tui.see('model: other-model');
      await tui.type('/frobnicate');
      await tui.see('error [usage]: unknown command /frobnicate');
    } finally {
      await tui.close();
    }
  });
});
