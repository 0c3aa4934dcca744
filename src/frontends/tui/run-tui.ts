/**
 * The interactive terminal UI (`mend` on a TTY without -p / stream-json / json):
 * renders the App with Ink on the host's stdio and runs until the person quits.
 * The composition root decides when this front end runs and passes the
 * terminal facts (NO_COLOR) in; this module reads no environment and installs
 * no signal handlers: a SIGTERM reaches it as the host's stop signal.
 */
import { render } from 'ink';
import { createElement as h } from 'react';
import type { HostEnv } from '../../runtime/host-env.js';
import { ExitCode, exitCodeForAbort } from '../../wire/exit-codes.js';
import type { StdioRunOptions } from '../shared/run-options.js';
import { hostOpenRequestFor } from '../shared/start-stdio-run.js';
import { App } from './components/app.js';
import { TuiController } from './tui-controller.js';

export interface TuiRunOptions extends StdioRunOptions {
  /** -i/--prompt-interactive: the first prompt, sent once the session is open. */
  promptInteractive: string | undefined;
}

export interface TerminalFacts {
  noColor: boolean;
}

export async function runTui(o: TuiRunOptions, host: HostEnv, terminal: TerminalFacts): Promise<number> {
  const stdout = host.stdout as NodeJS.WriteStream;
  const controller = new TuiController(
    {
      runtime: host.runtime,
      modelName: host.modelName,
      clearScreen: () => stdout.write('\x1b[2J\x1b[3J\x1b[H'),
    },
    hostOpenRequestFor(o, { mode: 'write_or_read_only' }),
  );
  const instance = render(h(App, { controller, noColor: terminal.noColor }), {
    stdin: host.stdin as NodeJS.ReadStream,
    stdout,
    stderr: host.stderr as NodeJS.WriteStream,
    // Ctrl-C stops the running turn; the controller decides when it exits.
    exitOnCtrlC: false,
    patchConsole: false,
  });
  const onStop = () => void controller.quit();
  host.signal.addEventListener('abort', onStop, { once: true });
  try {
    await controller.start(o.promptInteractive ?? o.prompt);
    await controller.exited;
    // Let Ink draw the last state before it lets go of the terminal.
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    host.signal.removeEventListener('abort', onStop);
    instance.unmount();
    await controller.quit();
  }
  if (host.signal.aborted) return exitCodeForAbort(host.signal.reason);
  return ExitCode.success;
}
