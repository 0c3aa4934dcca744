/** Recovery vocabulary on the wire: kinds, causes, the active writer. Pure zod. */
import { z } from 'zod';

export const RecoveryKindWireSchema = z.enum(['clean', 'interrupted_prompt', 'interrupted_turn', 'degraded_history']);
export const RecoveryCauseSchema = z.enum(['none', 'crash', 'aborted', 'unknown', 'running', 'failed']);
export const ActiveWriterWireSchema = z.looseObject({
  store: z.string(),
  host: z.string(),
  pid: z.number().int(),
  since: z.string(),
  epoch: z.number().int().optional(),
});
