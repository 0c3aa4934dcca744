/**
 * Keeps tool output within a byte budget without holding more than the budget in memory,
 * however much a command prints. Truncation is always announced with a marker so the
 * model knows it did not see everything.
 */

export function truncationMarker(omittedBytes: number): string {
  return `\n[output truncated: ${omittedBytes} bytes omitted]\n`;
}

/**
 * Streams bytes in and keeps the head and the tail: the start of a command's output
 * says what ran, the end says how it finished (errors, summaries, exit messages).
 */
export class OutputCapper {
  private readonly headCap: number;
  private readonly tailCap: number;
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;

  constructor(cap: number, options: { keepTail?: boolean } = {}) {
    const keepTail = options.keepTail ?? true;
    this.headCap = keepTail ? Math.ceil(cap / 2) : cap;
    this.tailCap = cap - this.headCap;
  }

  get totalBytes(): number {
    return this.total;
  }

  push(chunk: Buffer | string): void {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.total += data.length;
    if (this.head.length < this.headCap) {
      const room = this.headCap - this.head.length;
      this.head = Buffer.concat([this.head, data.subarray(0, room)]);
      data = data.subarray(room);
    }
    if (data.length > 0 && this.tailCap > 0) {
      const joined = this.tail.length > 0 ? Buffer.concat([this.tail, data]) : data;
      this.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - this.tailCap)));
    }
  }

  text(): string {
    const omitted = this.total - this.head.length - this.tail.length;
    if (omitted <= 0) return Buffer.concat([this.head, this.tail]).toString('utf8');
    // Cut on character boundaries so the marker is not surrounded by replacement characters.
    const head = this.head.subarray(0, completeUtf8Prefix(this.head));
    const tailStart = skipContinuationBytes(this.tail);
    const tail = this.tail.subarray(tailStart);
    const dropped = omitted + (this.head.length - head.length) + tailStart;
    return `${head.toString('utf8')}${truncationMarker(dropped)}${tail.toString('utf8')}`;
  }
}

/** Caps a string already in memory; keeps only the head (for file reads and listings). */
export function capText(text: string, cap: number): string {
  const capper = new OutputCapper(cap, { keepTail: false });
  capper.push(text);
  return capper.text();
}

/** Length of the longest prefix that does not end inside a multi-byte UTF-8 sequence. */
function completeUtf8Prefix(buf: Buffer): number {
  for (let back = 1; back <= Math.min(4, buf.length); back += 1) {
    const byte = buf[buf.length - back] as number;
    if ((byte & 0b1100_0000) === 0b1000_0000) continue; // continuation byte: keep looking for the lead
    const needed = byte >= 0b1111_0000 ? 4 : byte >= 0b1110_0000 ? 3 : byte >= 0b1100_0000 ? 2 : 1;
    return needed > back ? buf.length - back : buf.length;
  }
  return buf.length;
}

function skipContinuationBytes(buf: Buffer): number {
  let i = 0;
  while (i < Math.min(3, buf.length) && ((buf[i] as number) & 0b1100_0000) === 0b1000_0000) i += 1;
  return i;
}
