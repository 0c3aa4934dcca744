/**
 * The calls repairHistory pairs results with, as columns: one object per call was
 * about 90 bytes, and a 1M-record session has some 300k calls. A call is
 * its index; the fields are what repair-history.ts's pairing reads and writes.
 */
import type { Part } from '../session/records.js';

export class CallTable {
  count = 0;
  readonly ids: string[] = [];
  readonly names: string[] = [];
  /** Index of the call's model entry in the input history. */
  entry = new Int32Array(256);
  /** Index of the input entry the response part is taken from as it is (shareUnchanged only), or -1. */
  responseEntry = new Int32Array(256);
  /** Part number of a renamed result, which a result under the call's own name displaces, or -1. */
  responseK = new Int32Array(256);
  hoisted = new Uint8Array(256);
  readonly responses: Array<Part | undefined> = [];
  /** The function name a result was recorded under, when it is not the call's (few calls have one). */
  readonly renamedFrom = new Map<number, string>();

  /** A new call; its index. */
  add(id: string, name: string, entryIndex: number): number {
    const c = this.count++;
    if (c === this.entry.length) {
      const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.entry = grow(this.entry, (n) => new Int32Array(n));
      this.responseEntry = grow(this.responseEntry, (n) => new Int32Array(n));
      this.responseK = grow(this.responseK, (n) => new Int32Array(n));
      this.hoisted = grow(this.hoisted, (n) => new Uint8Array(n));
    }
    this.ids.push(id);
    this.names.push(name);
    this.entry[c] = entryIndex;
    this.responseEntry[c] = -1;
    this.responseK[c] = -1;
    this.hoisted[c] = 0;
    this.responses.push(undefined);
    return c;
  }
}
