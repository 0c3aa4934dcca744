/**
 * The first record of a mend session copied from another agent's file: where it came
 * from (agent, the file, the SHA-256 of the bytes read, the source's plan id), so the
 * plan and the `system/recovery` line can say so every time the copy is opened.
 */
import { z } from 'zod';

export const FOREIGN_IMPORT_SUBTYPE = 'foreign_import';

export const ForeignImportPayloadSchema = z.looseObject({
  agent: z.string(),
  agentVersion: z.string().nullable(),
  sessionId: z.string().nullable(),
  path: z.string(),
  sha256: z.string(),
  planId: z.string().optional(),
});
export type ForeignImportPayload = z.infer<typeof ForeignImportPayloadSchema>;
