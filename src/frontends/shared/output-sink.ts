/**
 * Where a run's messages go, per --output-format. stream-json: one protocol line
 * per message on stdout and nothing else. json: a single result object at the end.
 * text: the assistant's text on stdout; notices and errors on stderr.
 */
import type { Writable } from 'node:stream';
import { serializeLine } from '../../wire/line-framer.js';
import type { CliOutboundControl } from '../../wire/control.js';
import type { OutputMessage, RecoverySummary, ResultMessage } from '../../wire/messages.js';
import type { OutputFormat } from './run-options.js';

export interface OutputSink {
  readonly format: OutputFormat;
  emit(message: OutputMessage | CliOutboundControl): void;
  /** Human-facing notice: stderr in text mode, dropped elsewhere (the protocol carries it). */
  notice(text: string): void;
  debug(text: string): void;
  /** Exactly one per run (per turn with stream-json input). */
  result(message: ResultMessage): void;
  setRecovery(summary: RecoverySummary): void;
  /** Resolves once everything written has been flushed. */
  flush(): Promise<void>;
}

/**
 * Terminal control sequences (CSI/OSC escapes and other C0 controls but newline and tab)
 * in model text are shown as text, never interpreted: a model must not be able to move
 * the cursor, retitle the window or hide what it printed. stream-json keeps data as is.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]?|[\u0000-\u0008\u000b-\u001f\u007f\u009b]/g;

export function stripControlSequences(text: string): string {
  return text.replace(CONTROL, '');
}

export interface OutputSinkOptions {
  /** Text mode: print every assistant text as it arrives, not only the final answer. */
  verbose?: boolean;
}

export function createOutputSink(format: OutputFormat, stdout: Writable, stderr: Writable, debugEnabled: boolean, options: OutputSinkOptions = {}): OutputSink {
  let recovery: RecoverySummary | undefined;
  // A reader that went away (`| head -1`): stop writing rather than fail on every line.
  const write = (stream: Writable, text: string) => {
    if (stream.destroyed || stream.writableEnded) return;
    stream.write(text);
  };
  const plain = (text: string) => stripControlSequences(text);

  return {
    format,
    emit(message) {
      if (format === 'stream-json') {
        write(stdout, serializeLine(message));
        return;
      }
      if (format === 'text' && message.type === 'system' && 'subtype' in message && message.subtype === 'warning') {
        write(stderr, `mend: warning: ${plain((message as { warning: { message: string } }).warning.message)}\n`);
        return;
      }
      // Text mode shows what a person expects: the final answer (printed with the result);
      // with --verbose, every assistant text of every step too, one block per line.
      if (format === 'text' && options.verbose && message.type === 'assistant') {
        for (const block of message.message.content) {
          if (block.type === 'text' && block.text) write(stdout, `${plain(block.text).replace(/\n$/, '')}\n`);
        }
      }
    },
    notice(text) {
      if (format === 'text') write(stderr, `mend: ${plain(text)}\n`);
    },
    debug(text) {
      if (debugEnabled) write(stderr, `mend[debug]: ${plain(text)}\n`);
    },
    setRecovery(summary) {
      recovery = summary;
    },
    result(message) {
      if (format === 'stream-json') {
        write(stdout, serializeLine(message));
      } else if (format === 'json') {
        write(stdout, serializeLine(recovery ? { ...message, recovery } : message));
      } else if (message.is_error && message.error) {
        write(stderr, `mend: error [${message.error.code}]: ${plain(message.error.message)}\n`);
      } else if (!message.is_error && message.result && message.num_turns === 0) {
        write(stderr, `mend: ${plain(message.result)}\n`);
      } else if (!message.is_error && message.result && !options.verbose) {
        write(stdout, `${plain(message.result).replace(/\n$/, '')}\n`);
      }
    },
    flush() {
      return new Promise((resolve) => {
        if (stdout.writableLength === 0 || stdout.destroyed) resolve();
        else stdout.once('drain', () => resolve());
      });
    },
  };
}
