/**
 * The live holder of a session's writer lease, as a store reports it: the JSONL
 * lock knows host, pid and start time; the PostgreSQL store adds its lease epoch.
 * An input of the plan (a live session is not a crash), so it lives innermost.
 */
import { z } from 'zod';

export const ActiveWriterSchema = z.object({
  store: z.string(),
  host: z.string(),
  pid: z.number().int(),
  since: z.string(),
  epoch: z.number().int().optional(),
});
export type ActiveWriter = z.infer<typeof ActiveWriterSchema>;
