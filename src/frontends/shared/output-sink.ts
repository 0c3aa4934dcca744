/**
 * Where a run's messages go, per --output-format. stream-json: one protocol line
 * per message on stdout and nothing else. json: a single result object at the end.
 * text: the assistant's text on stdout; notices and errors on stderr.
 */
import type { Writable } from 'node:stream';
import { serializeLine } from '../../stream/line-framer.js';
import type { CliOutboundControl } from '../../stream/control.js';
import type { OutputMessage, RecoverySummary, ResultMessage } from '../../stream/messages.js';
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

export function createOutputSink(format: OutputFormat, stdout: Writable, stderr: Writable, debugEnabled: boolean): OutputSink {
  let recovery: RecoverySummary | undefined;
  let textOpen = false;
  const write = (stream: Writable, text: string) => {
    stream.write(text);
  };

  return {
    format,
    emit(message) {
      if (format === 'stream-json') {
        write(stdout, serializeLine(message));
        return;
      }
      if (format === 'text' && message.type === 'system' && 'subtype' in message && message.subtype === 'warning') {
        write(stderr, `mend: warning: ${(message as { warning: { message: string } }).warning.message}\n`);
        return;
      }
      if (format === 'text' && message.type === 'assistant') {
        for (const block of message.message.content) {
          if (block.type === 'text' && block.text) {
            write(stdout, block.text);
            textOpen = !block.text.endsWith('\n');
          }
        }
      }
    },
    notice(text) {
      if (format === 'text') write(stderr, `mend: ${text}\n`);
    },
    debug(text) {
      if (debugEnabled) write(stderr, `mend[debug]: ${text}\n`);
    },
    setRecovery(summary) {
      recovery = summary;
    },
    result(message) {
      if (format === 'stream-json') {
        write(stdout, serializeLine(message));
      } else if (format === 'json') {
        write(stdout, serializeLine(recovery ? { ...message, recovery } : message));
      } else {
        if (textOpen) write(stdout, '\n');
        textOpen = false;
        if (message.is_error && message.error) write(stderr, `mend: error [${message.error.code}]: ${message.error.message}\n`);
        else if (!message.is_error && message.result && message.num_turns === 0) write(stderr, `mend: ${message.result}\n`);
      }
    },
    flush() {
      return new Promise((resolve) => {
        if (stdout.writableLength === 0) resolve();
        else stdout.once('drain', () => resolve());
      });
    },
  };
}
