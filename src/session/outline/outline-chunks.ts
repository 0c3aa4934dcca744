/**
 * How two threads share the outline pass over one file: the file is cut
 * into chunks of a fixed number of bytes; the main thread takes them from the front,
 * the worker from the back, until they meet, so both stay busy however late the
 * worker starts and however the machine shares its CPUs. A chunk holds the lines that
 * start in its byte range (a line may run on past the range's end), so any thread can
 * read any chunk knowing only the range.
 *
 * The claims live in shared memory behind a tiny lock: a claim happens once per chunk
 * (every few MiB), so contention is negligible.
 */

const LOCK = 0;
const FRONT = 1;
const BACK = 2;
const READY = 3;

export class ChunkClaims {
  private readonly cells: Int32Array;

  /** New claims over `chunks` chunks, or the claims another thread created, from its `buffer`. */
  constructor(from: number | SharedArrayBuffer) {
    if (typeof from === 'number') {
      this.cells = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
      Atomics.store(this.cells, BACK, from);
    } else {
      this.cells = new Int32Array(from);
    }
  }

  get buffer(): SharedArrayBuffer {
    return this.cells.buffer as SharedArrayBuffer;
  }

  /** The lowest chunk nobody took yet, now the front's, or -1 when none is left. */
  front(): number {
    return this.claim(true);
  }

  /** The highest chunk nobody took yet, now the back's, or -1 when none is left. */
  back(): number {
    return this.claim(false);
  }

  /** Tells the other thread this one is about to take chunks. */
  ready(): void {
    Atomics.store(this.cells, READY, 1);
  }

  /** Resolves once the other thread called ready(), or `gaveUp()` (polled: only tests wait for it). */
  async whenReady(gaveUp: () => boolean): Promise<void> {
    while (Atomics.load(this.cells, READY) === 0 && !gaveUp()) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  private claim(fromFront: boolean): number {
    this.lock();
    let chunk = -1;
    const front = Atomics.load(this.cells, FRONT);
    const back = Atomics.load(this.cells, BACK);
    if (front < back) {
      chunk = fromFront ? front : back - 1;
      if (fromFront) Atomics.store(this.cells, FRONT, front + 1);
      else Atomics.store(this.cells, BACK, back - 1);
    }
    Atomics.store(this.cells, LOCK, 0);
    return chunk;
  }

  private lock(): void {
    while (Atomics.compareExchange(this.cells, LOCK, 0, 1) !== 0) {
      // Held for a few instructions by the other thread.
    }
  }
}
