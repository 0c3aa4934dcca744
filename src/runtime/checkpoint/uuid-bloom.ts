/**
 * The uuids of a checkpoint's prefix, as a Bloom filter: whether a record read after the
 * prefix may reuse one (a late fragment, a repeated line), which would change what the
 * prefix's records are. "Maybe" is answered for every uuid that is in the set and for a
 * few that are not (then the log is read whole: a false positive costs time, never
 * correctness). About 20 bits per uuid at capacity, 7 probes: ~0.03% false positives.
 */
import { uuidToWords } from '../../session/outline/history-reader.js';

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

  /** Adds record i's uuid. */
  add(source: UuidSource, i: number): void {
    keyOf(source, i);
    const m = this.bits.length * 8;
    for (let p = 0; p < PROBES; p++) {
      const bit = (KEY[0]! + p * KEY[1]!) % m;
      this.bits[bit >>> 3]! |= 1 << (bit & 7);
    }
    this.count++;
  }

  /** Whether record i's uuid may be in the set. */
  mayHave(source: UuidSource, i: number): boolean {
    keyOf(source, i);
    const m = this.bits.length * 8;
    for (let p = 0; p < PROBES; p++) {
      const bit = (KEY[0]! + p * KEY[1]!) % m;
      if ((this.bits[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }
}

/** What the filter reads of a record source: uuids, as words where the source has them so (no string made). */
export interface UuidSource {
  uuid(i: number): string;
  uuidWords?(i: number, out: Uint32Array): boolean;
}

const WORDS = new Uint32Array(4);
/** The two hashes of the last key made (the second odd). */
const KEY = new Uint32Array(2);

/**
 * Two 32-bit hashes of a uuid: of its four words for a canonical uuid (however it is
 * held, so a string and its words give the same key), of its characters otherwise.
 */
function keyOf(source: UuidSource, i: number): void {
  if (source.uuidWords?.(i, WORDS) === true || uuidToWords(source.uuid(i), WORDS, 0)) {
    KEY[0] = fmix(WORDS[0]! ^ Math.imul(WORDS[2]!, 0x9e3779b1));
    KEY[1] = fmix(WORDS[1]! ^ Math.imul(WORDS[3]!, 0x85ebca77) ^ 0x27d4eb2f) | 1;
    return;
  }
  const [a, b] = hashes(source.uuid(i));
  KEY[0] = a;
  KEY[1] = b;
}

/** MurmurHash3's finalizer: every input bit reaches every output bit. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
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
