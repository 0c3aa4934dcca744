/**
 * The uuids of a checkpoint's prefix, as a Bloom filter: whether a record read after the
 * prefix may reuse one (a late fragment, a repeated line), which would change what the
 * prefix's records are. "Maybe" is answered for every uuid that is in the set and for a
 * few that are not (then the log is read whole: a false positive costs time, never
 * correctness). About 20 bits per uuid at capacity, 7 probes: ~0.03% false positives.
 */
const BITS_PER_UUID = 20;
const PROBES = 7;

export class UuidBloom {
  private constructor(
    readonly bits: Uint8Array,
    /** How many uuids it was sized for; past that its false positives grow, so it is rebuilt. */
    readonly capacity: number,
    public count: number,
  ) {}

  /** Room for `capacity` uuids. */
  static sized(capacity: number): UuidBloom {
    const cap = Math.max(1024, Math.ceil(capacity));
    return new UuidBloom(new Uint8Array(Math.ceil((cap * BITS_PER_UUID) / 8)), cap, 0);
  }

  static from(bits: Uint8Array, capacity: number, count: number): UuidBloom {
    return new UuidBloom(bits, capacity, count);
  }

  copy(): UuidBloom {
    return new UuidBloom(this.bits.slice(), this.capacity, this.count);
  }

  add(uuid: string): void {
    const m = this.bits.length * 8;
    const [h1, h2] = hashes(uuid);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % m;
      this.bits[bit >>> 3]! |= 1 << (bit & 7);
    }
    this.count++;
  }

  mayHave(uuid: string): boolean {
    const m = this.bits.length * 8;
    const [h1, h2] = hashes(uuid);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) % m;
      if ((this.bits[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit hashes of the string (FNV-1a with two offsets), the second odd. */
function hashes(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return [a >>> 0, (b | 1) >>> 0];
}
