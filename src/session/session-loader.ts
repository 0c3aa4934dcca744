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
  // The file name's id, when it is one, says which session the file holds (a foreign
  // line cannot take it over); an empty or fully damaged log names no session but it.
  const stem = basename(path, '.jsonl');
  const fileSessionId = isSessionId(stem) ? stem : undefined;
  const read = await readSessionLog(path, fileSessionId !== undefined && options.fileSessionId === undefined ? { ...options, fileSessionId } : options);
  return buildConversation(read, fileSessionId !== undefined ? { fallbackSessionId: fileSessionId } : {});
}
