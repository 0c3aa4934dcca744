/**
 * Gemini CLI session records (`~/.gemini/tmp/<project>/chats/session-<ts>-<id8>.jsonl`,
 * and the legacy whole-file `.json` with a `messages` array); inbound tolerant.
 * JSONL lines are upserts by message `id` (the last copy wins, in the place of the
 * first), `{"$set": {...}}` metadata updates and `{"$rewindTo": id}` (drops that
 * message and every later one; an id not found drops all).
 */
import { z } from 'zod';

export const GeminiMetadataSchema = z.looseObject({
  sessionId: z.string().min(1),
  projectHash: z.string(),
  startTime: z.string().optional(),
  lastUpdated: z.string().optional(),
});

const PartLikeSchema = z.looseObject({ text: z.string().optional() });

export const GeminiToolCallSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()).optional(),
  result: z
    .union([z.string(), z.array(z.looseObject({})), z.looseObject({})])
    .nullable()
    .optional(),
  status: z.string().optional(),
});
export type GeminiToolCall = z.infer<typeof GeminiToolCallSchema>;

export const GeminiMessageSchema = z.looseObject({
  id: z.string().min(1),
  timestamp: z.string().optional(),
  type: z.string(),
  content: z
    .union([z.string(), z.array(PartLikeSchema), PartLikeSchema])
    .nullable()
    .optional(),
  toolCalls: z.array(GeminiToolCallSchema).optional(),
  thoughts: z.array(z.looseObject({ subject: z.string().optional(), description: z.string().optional() })).optional(),
  model: z.string().optional(),
});
export type GeminiMessage = z.infer<typeof GeminiMessageSchema>;

export const GeminiLegacyFileSchema = z.looseObject({
  sessionId: z.string().min(1),
  projectHash: z.string(),
  messages: z.array(z.unknown()),
});

export const GEMINI_MESSAGE_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning']);
