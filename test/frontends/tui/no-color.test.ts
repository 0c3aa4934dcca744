/**
 * NO_COLOR: the terminal UI prints no SGR escape of any kind (colour, background, bold,
 * dim, italic, inverse, reset) in any frame of a turn that draws every styled element.
 * Without a terminal Ink's chalk styles nothing, so this file forces colour on
 * (FORCE_COLOR, read when chalk loads: the harness is imported after it is set) and
 * checks that the same turn without NO_COLOR does print SGR, or the check would prove nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';

process.env['FORCE_COLOR'] = '1';
const { renderTui } = await import('./tui-harness.js');
const { cleanupSandboxes, waitFor } = await import('../../support/cli.js');

afterAll(cleanupSandboxes);

const SGR = /\x1b\[[0-9;:]*m/g;
const unstyled = (text: string) => text.replace(SGR, '');

/** Every frame of one turn: the prompt and its cursor, the user line, a thought, the approval box, a tool call with output, an error, the footer. */
async function framesOfATurn(noColor: boolean): Promise<string> {
  const tui = await renderTui({
    noColor,
    script: [
      { thought: 'Thinking it over.', text: 'Running it.', toolCalls: [{ id: 'c1', name: 'run_shell_command', args: { command: 'echo out' } }] },
      { text: 'Done.' },
    ],
  });
  // The text, whatever styles split it.
  const see = (text: string) => waitFor(() => unstyled(tui.frame()).includes(text), 30_000, `the frame to show ${text}\n${tui.frame()}`);
  try {
    await tui.type('go', false);
    await see('go');
    await tui.type('');
    await see('Allow run_shell_command?');
    await tui.key('y');
    await see('✦ Done.');
    await tui.type('/frobnicate');
    await see('unknown command /frobnicate');
    return tui.frames().join('\n');
  } finally {
    await tui.close();
  }
}

describe('NO_COLOR in the terminal UI', () => {
  it('with colour, the same turn is styled: colours, bold, dim and the inverse cursor cell', async () => {
    const drawn = await framesOfATurn(false);
    const codes = new Set(drawn.match(SGR));
    for (const code of ['\x1b[1m', '\x1b[2m', '\x1b[3m', '\x1b[7m', '\x1b[36m']) expect(codes, JSON.stringify(code)).toContain(code);
  });

  it('with NO_COLOR, no frame has an SGR escape of any kind, and the cursor is still shown', async () => {
    const drawn = await framesOfATurn(true);
    expect(drawn.match(SGR) ?? []).toEqual([]);
    expect(drawn).toContain('> go▏');
    expect(drawn).toContain('✔ run_shell_command');
  });
});
