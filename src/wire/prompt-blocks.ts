/**
 * ACP prompt content blocks as mend reads them, on every route that takes them
 * (ACP's `session/prompt`, the daemon's `POST /session/:id/prompt`). Tolerant
 * inbound: every block kind is accepted; what a kind needs is checked where the
 * block becomes parts (src/frontends/shared/prompt-parts.ts), so a block of a
 * kind mend cannot send is skipped or described, never a parse failure.
 */
import { z } from 'zod';

export const PromptResourceSchema = z.looseObject({
  uri: z.string(),
  text: z.string().nullish(),
  blob: z.string().nullish(),
  mimeType: z.string().nullish(),
});

export const PromptBlockSchema = z.looseObject({
  type: z.string(),
  /** text */
  text: z.string().nullish(),
  /** image, audio */
  mimeType: z.string().nullish(),
  data: z.string().nullish(),
  /** resource_link */
  uri: z.string().nullish(),
  name: z.string().nullish(),
  title: z.string().nullish(),
  /** resource (embedded context) */
  resource: PromptResourceSchema.nullish(),
});
export type PromptBlock = z.infer<typeof PromptBlockSchema>;
