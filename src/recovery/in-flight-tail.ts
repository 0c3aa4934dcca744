/**
 * Where the unfinished turn of a conversation starts: the first of the prompts the
 * last model entries have not finished answering. A fork of a session that another
 * process is still writing leaves this tail out, because that process is still
 * answering it: copied, the prompt would be sent to the model a second time and its
 * open calls closed as "outcome unknown" while they still run. Pure.
 */
import { apiHistoryView } from '../session/api-history.js';
import type { ConversationRecord } from '../session/conversation.js';
import type { ChatRecord } from '../session/records.js';
import { detectTurnInterruption } from './detect-interruption.js';
import { isRealUserContent } from './parts.js';

/**
 * Index into `conversation.records` (the active chain) of the record that starts the
 * unfinished turn, or null when the tail is complete or no prompt of it is on the chain
 * after the latest compression (then there is nothing the chain can leave out).
 */
export function inFlightTailStart(conversation: ConversationRecord): number | null {
  if (detectTurnInterruption(apiHistoryView(conversation)).state === 'complete') return null;
  const records = conversation.records;
  // The turn's prompt is the last run of prompt records: a tool loop's user records carry
  // only results, and system records (markers) may sit anywhere in between.
  let i = records.length - 1;
  while (i >= 0 && !isPrompt(records[i]!)) i--;
  if (i < 0) return null;
  let start = i;
  for (let j = i - 1; j >= 0; j--) {
    const record = records[j]!;
    if (record.type === 'system') continue;
    if (!isPrompt(record)) break;
    start = j;
  }
  return start;
}

function isPrompt(record: ChatRecord): boolean {
  return record.type === 'user' && record.message.parts.some(isRealUserContent);
}
