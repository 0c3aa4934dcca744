/**
 * The one ordered append path of an open session. Every record the session writes
 * (the engine's turn records, mode and model changes, notices from a front end or the
 * runtime) goes through here: appends run one at a time in call order, and each
 * record's parent is assigned when its turn comes, from the record appended before
 * it. Two writers that each read the leaf and then append (a mode change arriving
 * while a tool result is being written) would otherwise give two records the same
 * parent, forking the chain so that one branch drops out of the conversation.
 *
 * A record shares a parent with another only when the caller asks for a branch
 * (`branchFrom`). A failed append leaves the leaf where it was: the next record
 * chains onto the last one the store acknowledged.
 */
import type { ChatRecord } from '../session/records.js';
import type { AppendOptions, WriterLease } from '../store/session-store.js';

export interface ChainAppendOptions extends AppendOptions {
  /** A deliberate branch: the parent to use instead of the chain's leaf (null: a new root). */
  branchFrom?: string | null;
}

export class RecordChain {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly lease: WriterLease,
    private leaf: string | null,
  ) {}

  /** The uuid of the last record the store acknowledged through this chain (or the loaded leaf). */
  get leafUuid(): string | null {
    return this.leaf;
  }

  /** Appends in call order; the record's `parentUuid` is set here, right before it is stored. */
  append(record: ChatRecord, options: ChainAppendOptions): Promise<void> {
    const run = this.tail.then(async () => {
      record.parentUuid = options.branchFrom !== undefined ? options.branchFrom : this.leaf;
      await this.lease.append(record, { durable: options.durable });
      this.leaf = record.uuid;
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every append made so far has settled. */
  async settled(): Promise<void> {
    await this.tail;
  }
}
