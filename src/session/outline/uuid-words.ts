/**
 * Uuids as four 32-bit words instead of strings. A session outline keeps
 * the uuid of every record; as strings they were a third of its memory and most of
 * its garbage-collection time (every one survives the young generation). The
 * canonical lowercase form (what mend, Qwen Code and Claude Code write) is stored as
 * words and formatted back when a uuid is shown; any other id is kept as its string.
 */

const HEX = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c++) HEX[48 + c] = c;
for (let c = 0; c < 6; c++) HEX[97 + c] = 10 + c;

/** Positions of the 32 hex digits in `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
const DIGITS: readonly number[] = [...Array(36).keys()].filter((i) => i !== 8 && i !== 13 && i !== 18 && i !== 23);

/**
 * Writes the words of a canonical lowercase uuid at `words[at...at+3]`; false (nothing
 * meaningful written) for any other string.
 */
export function uuidToWords(s: string, words: Uint32Array, at: number): boolean {
  if (s.length !== 36 || s.charCodeAt(8) !== 45 || s.charCodeAt(13) !== 45 || s.charCodeAt(18) !== 45 || s.charCodeAt(23) !== 45) return false;
  for (let w = 0; w < 4; w++) {
    // Shifts and ors keep `value` a 32-bit integer (a multiply past 2^31 made it a heap
    // number: 140 ns a uuid); the Uint32Array store reads its bits back as unsigned.
    let value = 0;
    for (let d = w * 8; d < w * 8 + 8; d++) {
      const c = s.charCodeAt(DIGITS[d]!);
      const v = c < 128 ? HEX[c]! : -1;
      if (v < 0) return false;
      value = (value << 4) | v;
    }
    words[at + w] = value;
  }
  return true;
}

/** uuidToWords for a uuid given as bytes[from, to) (ASCII): the same words, the same answer. */
export function uuidBytesToWords(b: Uint8Array, from: number, to: number, words: Uint32Array, at: number): boolean {
  if (to - from !== 36 || b[from + 8] !== 45 || b[from + 13] !== 45 || b[from + 18] !== 45 || b[from + 23] !== 45) return false;
  for (let w = 0; w < 4; w++) {
    let value = 0;
    for (let d = w * 8; d < w * 8 + 8; d++) {
      const c = b[from + DIGITS[d]!]!;
      const v = c < 128 ? HEX[c]! : -1;
      if (v < 0) return false;
      value = (value << 4) | v;
    }
    words[at + w] = value;
  }
  return true;
}

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');

/** The canonical string of the words at `words[at...at+3]`. */
export function wordsToUuid(words: Uint32Array, at: number): string {
  const a = hex8(words[at]!);
  const b = hex8(words[at + 1]!);
  const c = hex8(words[at + 2]!);
  const d = hex8(words[at + 3]!);
  return `${a}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${d}`;
}

const MAX_PROBES = 64;

/**
 * uuid -> the first index stored under it: an open-addressing table over the words of
 * canonical uuids (their bits are already random: no hashing needed), and a Map for
 * any other id. A lookup that probes too long (crafted uuids that share their low
 * bits) moves every word-keyed entry into the Map as a string, so it is never much
 * worse than a Map alone.
 */
export class UuidTable {
  private slots: Int32Array; // index + 1; 0: empty
  private count = 0;
  private odd: Map<string, number> | null = null;
  private overflowed = false;
  private readonly probe = new Uint32Array(4);

  /** `wordsAt(i)`: the offset of index i's words in `words`, or -1 when its uuid is not canonical (then `stringAt(i)`). */
  constructor(
    private readonly words: () => Uint32Array,
    private readonly canonical: (i: number) => boolean,
    private readonly stringAt: (i: number) => string,
    /** How many entries to expect: the table starts at twice that (no rehashing on the way). */
    expected = 512,
  ) {
    let size = 1 << 10;
    while (size < 2 * expected) size *= 2;
    this.slots = new Int32Array(size);
  }

  /** The index already stored for the uuid of `i`, or -1 after storing `i` under it. */
  findOrAdd(i: number): number {
    if (this.overflowed || !this.canonical(i)) return this.oddFindOrAdd(this.stringAt(i), i);
    const words = this.words();
    const at = this.probeFor(words, 4 * i, i);
    if (at >= 0) return at;
    if (this.overflowed) return this.oddFindOrAdd(this.stringAt(i), i);
    return -1;
  }

  /** The index stored under `uuid`, or -1. */
  find(uuid: string): number {
    if (!this.overflowed && uuidToWords(uuid, this.probe, 0)) return this.lookup(this.probe, 0);
    return this.odd?.get(uuid) ?? -1;
  }

  private oddFindOrAdd(uuid: string, i: number): number {
    this.odd ??= new Map();
    const at = this.odd.get(uuid);
    if (at !== undefined) return at;
    this.odd.set(uuid, i);
    return -1;
  }

  private lookup(key: Uint32Array, k: number): number {
    const words = this.words();
    const mask = this.slots.length - 1;
    for (let s = key[k]! & mask; this.slots[s] !== 0; s = (s + 1) & mask) {
      const j = 4 * (this.slots[s]! - 1);
      if (words[j] === key[k] && words[j + 1] === key[k + 1] && words[j + 2] === key[k + 2] && words[j + 3] === key[k + 3]) return this.slots[s]! - 1;
    }
    return -1;
  }

  /** Finds the words at `words[k...]` or stores index `i` for them (-1). */
  private probeFor(words: Uint32Array, k: number, i: number): number {
    const mask = this.slots.length - 1;
    let s = words[k]! & mask;
    for (let probes = 0; this.slots[s] !== 0; probes++) {
      const j = 4 * (this.slots[s]! - 1);
      if (words[j] === words[k] && words[j + 1] === words[k + 1] && words[j + 2] === words[k + 2] && words[j + 3] === words[k + 3]) return this.slots[s]! - 1;
      if (probes === MAX_PROBES) {
        this.overflow();
        return -1;
      }
      s = (s + 1) & mask;
    }
    this.slots[s] = i + 1;
    if (++this.count * 2 > this.slots.length) this.grow();
    return -1;
  }

  private overflow(): void {
    this.overflowed = true;
    this.odd ??= new Map();
    for (const slot of this.slots) if (slot !== 0) this.odd.set(this.stringAt(slot - 1), slot - 1);
    this.slots = new Int32Array(1);
  }

  private grow(): void {
    const words = this.words();
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    const mask = this.slots.length - 1;
    for (const slot of old) {
      if (slot === 0) continue;
      let s = words[4 * (slot - 1)]! & mask;
      while (this.slots[s] !== 0) s = (s + 1) & mask;
      this.slots[s] = slot;
    }
  }
}
