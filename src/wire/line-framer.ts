/**
 * A tiny pure ndjson framer: feed it chunks, get back one value per line.
 * Unlike `ndjson`'s parser (which stops at the first bad line in strict mode and
 * drops it silently otherwise) every bad line comes back as a value, so the
 * caller can report it and keep reading.
 */
export const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;

export type FramedLine = { ok: true; line: number; value: unknown } | { ok: false; line: number; code: 'malformed_line' | 'line_too_long'; message: string };

export class LineFramer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** True while skipping the rest of a line that already exceeded the cap. */
  private discarding = false;
  private lineNumber = 0;

  constructor(private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES) {}

  push(chunk: Buffer | string): FramedLine[] {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const out: FramedLine[] = [];
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      this.take(buf.subarray(start, nl));
      const framed = this.finishLine();
      if (framed) out.push(framed);
      start = nl + 1;
    }
    if (start < buf.length) this.take(buf.subarray(start));
    return out;
  }

  /** Call at end of input: an unterminated last line is still a line. */
  end(): FramedLine[] {
    if (this.pendingBytes === 0 && !this.discarding) return [];
    const framed = this.finishLine();
    return framed ? [framed] : [];
  }

  private take(piece: Buffer): void {
    if (this.discarding || piece.length === 0) return;
    if (this.pendingBytes + piece.length > this.maxLineBytes) {
      this.pending = [];
      this.pendingBytes = 0;
      this.discarding = true;
      return;
    }
    this.pending.push(piece);
    this.pendingBytes += piece.length;
  }

  private finishLine(): FramedLine | null {
    this.lineNumber += 1;
    const line = this.lineNumber;
    if (this.discarding) {
      this.discarding = false;
      return { ok: false, line, code: 'line_too_long', message: `line ${line} is longer than ${this.maxLineBytes} bytes` };
    }
    let text = Buffer.concat(this.pending, this.pendingBytes).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    if (text.endsWith('\r')) text = text.slice(0, -1);
    // Some hosts start their stream with a UTF-8 byte-order mark; the log reader tolerates it too.
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') return null;
    try {
      return { ok: true, line, value: JSON.parse(text) as unknown };
    } catch (error) {
      return { ok: false, line, code: 'malformed_line', message: `line ${line} is not JSON: ${(error as Error).message}` };
    }
  }
}

/** One message, one line: JSON.stringify never emits a raw newline, so this is the whole serializer. */
export function serializeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
