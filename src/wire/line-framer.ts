/**
 * stdio ndjson framing for stream-json, ACP and the SDK: feed it chunks, get back one
 * value per line. Lines are cut by the one line splitter (line-splitter.ts) every
 * reader uses; unlike `ndjson`'s parser (which stops at the first bad line in strict
 * mode and drops it silently otherwise) every bad line comes back as a value, so the
 * caller can report it and keep reading. A line over the cap is dropped as it streams
 * in (memory stays bounded) and reported.
 */
import { LineSplitter, isBlank, viewText, type LineView } from './line-splitter.js';

export const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;

export type FramedLine = { ok: true; line: number; value: unknown } | { ok: false; line: number; code: 'malformed_line' | 'line_too_long'; message: string };

export class LineFramer {
  private out: FramedLine[] = [];
  private readonly splitter: LineSplitter;

  constructor(private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES) {
    // Pushed chunks are copied into the splitter's buffer a block at a time; small
    // blocks keep an idle framer small (stdio chunks are 64 KiB at most).
    this.splitter = new LineSplitter((line) => this.frame(line), { maxLineBytes, blockSize: 1 << 14 });
  }

  push(chunk: Buffer | string): FramedLine[] {
    this.splitter.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    return this.take();
  }

  /** Call at end of input: an unterminated last line is still a line. */
  end(): FramedLine[] {
    this.splitter.end();
    return this.take();
  }

  private take(): FramedLine[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private frame(view: LineView): void {
    const line = view.number;
    if (view.tooLong) {
      this.out.push({ ok: false, line, code: 'line_too_long', message: `line ${line} is longer than ${this.maxLineBytes} bytes` });
      return;
    }
    // Some hosts start their stream with a UTF-8 byte-order mark; viewText drops it, as the log reader does.
    const text = viewText(view);
    if (isBlank(text)) return;
    try {
      this.out.push({ ok: true, line, value: JSON.parse(text) as unknown });
    } catch (error) {
      this.out.push({ ok: false, line, code: 'malformed_line', message: `line ${line} is not JSON: ${(error as Error).message}` });
    }
  }
}

/** One message, one line: JSON.stringify never emits a raw newline, so this is the whole serializer. */
export function serializeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
