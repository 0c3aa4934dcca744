/** What an error result says beyond code and message: for a locked session, who holds it and which session. */
import { isMendError } from '../../errors.js';
import type { ErrorExtras } from './wire-messages.js';

export function errorExtras(error: unknown, sessionId: string): ErrorExtras {
  if (!isMendError(error, 'session_locked')) return {};
  const d = error.details ?? {};
  const holder: { host?: string; pid?: number | null; since?: string } = {};
  if (typeof d['host'] === 'string') holder.host = d['host'];
  if (typeof d['pid'] === 'number' || d['pid'] === null) holder.pid = d['pid'] as number | null;
  if (typeof d['since'] === 'string') holder.since = d['since'];
  return { holder, ...(sessionId ? { session_id: sessionId } : {}) };
}
