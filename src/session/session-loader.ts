/**
 * Reads a session log and builds its active conversation. Takes no lock:
 * loading and planning never write.
 */
import { basename } from 'node:path';
import type { LoadedSession } from './conversation.js';
import { buildConversation } from './conversation-loader.js';
import { readSessionLog, type ReadOptions } from './log-reader.js';
import { isSessionId } from './session-paths.js';

export async function loadSession(path: string, options: ReadOptions = {}): Promise<LoadedSession> {
  const read = await readSessionLog(path, options);
  // An empty or fully damaged log names no session; its file name may.
  const stem = basename(path, '.jsonl');
  return buildConversation(read, isSessionId(stem) ? { fallbackSessionId: stem } : {});
}
