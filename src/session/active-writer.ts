/**
 * The live holder of a session's write lease, as the store reports it: the JSONL
 * lock knows host, pid and start time; a database store adds its lease epoch.
 * A session someone is still writing is not a crash, so the plan takes this as an
 * input (the plan stays a pure function of its inputs; who holds the lease is one).
 */
import { z } from 'zod';

export const ActiveWriterSchema = z.object({
  /** Which store holds the lease (e.g. "jsonl", "postgres"). */
  store: z.string().min(1),
  host: z.string(),
  pid: z.number().int(),
  /** ISO 8601 time the holder took the lease. */
  since: z.string(),
  epoch: z.number().int().optional(),
});
export type ActiveWriter = z.infer<typeof ActiveWriterSchema>;

/** The same holder (or both none): same store, host, pid, start and epoch. */
export function sameHolder(a: ActiveWriter | null, b: ActiveWriter | null): boolean {
  if (a === null || b === null) return a === b;
  return a.store === b.store && a.host === b.host && a.pid === b.pid && a.since === b.since && a.epoch === b.epoch;
}
