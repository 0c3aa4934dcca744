/**
 * Reads a session log and builds its active conversation. Takes no lock:
 * loading and planning never write.
 */
import { basename } from 'node:path';
import type { LoadedSession } from './conversation.js';
import { buildConversation } from './conversation-loader.js';
import { readSessionBytes, readSessionLog, type ReadOptions, type ReadResult } from './log-reader.js';
import { isSessionId } from './session-paths.js';

export async function loadSession(path: string, options: ReadOptions = {}): Promise<LoadedSession> {
  return loadFrom(path, options, (o) => readSessionLog(path, o));
}

/** The same load over bytes in memory, as if they were the file at `path`. */
export async function loadSessionBytes(bytes: Buffer, path: string, options: ReadOptions = {}): Promise<LoadedSession> {
  return loadFrom(path, options, (o) => readSessionBytes(bytes, o));
}

async function loadFrom(path: string, options: ReadOptions, read: (options: ReadOptions) => Promise<ReadResult>): Promise<LoadedSession> {
  // The file name's id, when it is one, says which session the file holds (a foreign
  // line cannot take it over); an empty or fully damaged log names no session but it.
  const stem = basename(path, '.jsonl');
  const fileSessionId = isSessionId(stem) ? stem : undefined;
  const result = await read(fileSessionId !== undefined && options.fileSessionId === undefined ? { ...options, fileSessionId } : options);
  return buildConversation(result, fileSessionId !== undefined ? { fallbackSessionId: fileSessionId } : {});
}
