/**
 * The pools an outline's columns point into: strings that repeat (session
 * ids) as small numbers, and the ids of calls and results as UTF-8 in one buffer, so
 * that a 1M-record outline keeps no string per record.
 */

/** `a` itself when it holds `size`, else a copy of it with room for `size`. */
export function grow<T extends Int32Array | Float64Array | Uint8Array | Uint32Array>(a: T, size: number, make: (n: number) => T): T {
  if (size <= a.length) return a;
  const b = make(size);
  b.set(a);
  return b;
}

/** Strings that repeat (session ids, cwds, subtypes) as small numbers. */
export class StringTable {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();

  /** The number of `s`; `hint` (the number the same column had on the line before) is tried first. */
  of(s: string, hint = -1): number {
    if (hint >= 0 && this.list[hint] === s) return hint;
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.list.push(s) - 1;
      this.index.set(s, i);
    }
    return i;
  }
}

/** starts[j] of an undefined id and of one kept as a string. */
const NONE = -1;
const ODD = -2;
/** Ids up to this length are copied byte by byte while they are ASCII (IdPool.add). */
const ASCII_LOOP_MAX = 64;

/**
 * The ids of calls and results as UTF-8 in one growing buffer: no string kept per id,
 * but for the rare id UTF-8 cannot hold (a lone surrogate), kept as it is.
 */
export class IdPool {
  private bytes = Buffer.allocUnsafe(1 << 16);
  /** Ids UTF-8 cannot hold, by number (starts[j] === ODD). */
  private readonly odd = new Map<number, string>();
  used = 0;
  starts = new Int32Array(1024);
  ends = new Int32Array(1024);
  count = 0;

  reserve(count: number, bytes = 0): void {
    if (bytes > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(bytes);
      this.bytes.copy(bigger, 0, 0, this.used);
      this.bytes = bigger;
    }
    if (count <= this.starts.length) return;
    this.starts = grow(this.starts, count, (n) => new Int32Array(n));
    this.ends = grow(this.ends, count, (n) => new Int32Array(n));
  }

  add(id: string | undefined): void {
    const j = this.count++;
    if (j === this.starts.length) this.reserve(2 * j);
    if (id === undefined) {
      this.starts[j] = NONE;
      return;
    }
    if (this.used + 3 * id.length > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + 3 * id.length));
      this.bytes.copy(bigger, 0, 0, this.used);
      this.bytes = bigger;
    }
    this.starts[j] = this.used;
    // An ASCII id (the usual kind: `call_...`, `toolu_...`) byte by byte: Buffer#write is a
    // native call, ~0.2 us an id, 2% of a 100k-record resume.
    if (id.length <= ASCII_LOOP_MAX) {
      const bytes = this.bytes;
      const at = this.used;
      let k = 0;
      for (; k < id.length; k++) {
        const c = id.charCodeAt(k);
        if (c >= 0x80) break;
        bytes[at + k] = c;
      }
      if (k === id.length) {
        this.used = at + k;
        this.ends[j] = this.used;
        return;
      }
    }
    const written = this.bytes.write(id, this.used, 'utf8');
    // A lone surrogate (JSON's "\ud800") has no UTF-8: such an id is kept as it is. (As many
    // bytes as characters: all ASCII, nothing to check.)
    if (written !== id.length && this.bytes.toString('utf8', this.used, this.used + written) !== id) {
      this.starts[j] = ODD;
      this.odd.set(j, id);
      return;
    }
    this.used += written;
    this.ends[j] = this.used;
  }

  /** add() of the ASCII id in bytes[from, to) (line-scanner.ts made sure it is ASCII). */
  addBytes(b: Uint8Array, from: number, to: number): void {
    const j = this.count++;
    if (j === this.starts.length) this.reserve(2 * j);
    const n = to - from;
    if (this.used + n > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + n));
      this.bytes.copy(bigger, 0, 0, this.used);
      this.bytes = bigger;
    }
    const bytes = this.bytes;
    const at = this.used;
    for (let k = 0; k < n; k++) bytes[at + k] = b[from + k]!;
    this.starts[j] = at;
    this.used = at + n;
    this.ends[j] = this.used;
  }

  at(j: number): string | undefined {
    const start = this.starts[j]!;
    if (start < 0) return start === ODD ? this.odd.get(j) : undefined;
    // One decode per id. (Slicing ids out of a decoded window of the pool was faster, but a
    // slice keeps its whole window alive: the plan keeps every call id, which at 1M records
    // held the whole pool as text, 12 MB more than the quarter-of-the-file budget allows.)
    return this.bytes.toString('utf8', start, this.ends[j]!);
  }

  data(): IdsData {
    // The bytes are copied (a Buffer may share its memory); the offsets are transferred.
    return { bytes: new Uint8Array(this.bytes.subarray(0, this.used)), count: this.count, starts: this.starts, ends: this.ends, odd: this.odd };
  }

  /** Appends the ids of another pool. */
  append(other: IdsData): void {
    const base = this.used;
    const first = this.count;
    this.reserve(first + other.count, base + other.bytes.length);
    this.bytes.set(other.bytes, base);
    this.used += other.bytes.length;
    for (let j = 0; j < other.count; j++) {
      const start = other.starts[j]!;
      this.starts[first + j] = start < 0 ? start : start + base;
      this.ends[first + j] = other.ends[j]! + base;
    }
    for (const [j, id] of other.odd) this.odd.set(first + j, id);
    this.count += other.count;
  }
}

export interface IdsData {
  bytes: Uint8Array;
  count: number;
  starts: Int32Array;
  ends: Int32Array;
  /** Ids kept as strings (UTF-8 cannot hold them), by number. */
  odd: Map<number, string>;
}
