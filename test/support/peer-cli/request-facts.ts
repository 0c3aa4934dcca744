/**
 * What a peer CLI sent its model, read from the request body in each vendor's vocabulary:
 * the calls, the answers to each call (as text), and every piece of text, so a test can
 * count a call's answers and a prompt's occurrences the same way for all three.
 */
export interface SentCall {
  id: string;
  name: string;
}

export interface SentAnswer {
  callId: string;
  text: string;
}

export interface SentFacts {
  calls: SentCall[];
  answers: SentAnswer[];
  /** Every text the request carries (user, model and system texts, answers included). */
  texts: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(textOf).join('');
  if (isObj(v)) {
    if (typeof v['text'] === 'string') return v['text'];
    if ('content' in v) return textOf(v['content']);
    if ('output' in v) return textOf(v['output']);
    if ('error' in v) return textOf(v['error']);
  }
  return '';
}

/** Anthropic Messages: `messages[].content[]` blocks (tool_use, tool_result, text). */
export function anthropicFacts(body: unknown): SentFacts {
  const facts: SentFacts = { calls: [], answers: [], texts: [] };
  if (!isObj(body)) return facts;
  for (const message of arr(body['messages'])) {
    if (!isObj(message)) continue;
    const content = message['content'];
    if (typeof content === 'string') {
      facts.texts.push(content);
      continue;
    }
    for (const block of arr(content)) {
      if (!isObj(block)) continue;
      if (block['type'] === 'tool_use') facts.calls.push({ id: String(block['id']), name: String(block['name']) });
      else if (block['type'] === 'tool_result') {
        const text = textOf(block['content']);
        facts.answers.push({ callId: String(block['tool_use_id']), text });
        facts.texts.push(text);
      } else if (typeof block['text'] === 'string') facts.texts.push(block['text']);
    }
  }
  return facts;
}

/** OpenAI Responses: `input[]` items (message, function_call, function_call_output). */
export function responsesFacts(body: unknown): SentFacts {
  const facts: SentFacts = { calls: [], answers: [], texts: [] };
  if (!isObj(body)) return facts;
  for (const item of arr(body['input'])) {
    if (!isObj(item)) continue;
    if (item['type'] === 'function_call') facts.calls.push({ id: String(item['call_id']), name: String(item['name']) });
    else if (item['type'] === 'function_call_output') {
      const text = textOf(item['output']);
      facts.answers.push({ callId: String(item['call_id']), text });
      facts.texts.push(text);
    } else facts.texts.push(textOf(item['content']));
  }
  return facts;
}

/** Gemini: `contents[].parts[]` (text, functionCall, functionResponse). */
export function geminiFacts(body: unknown): SentFacts {
  const facts: SentFacts = { calls: [], answers: [], texts: [] };
  if (!isObj(body)) return facts;
  for (const content of arr(body['contents'])) {
    if (!isObj(content)) continue;
    for (const part of arr(content['parts'])) {
      if (!isObj(part)) continue;
      const call = part['functionCall'];
      const response = part['functionResponse'];
      if (isObj(call)) facts.calls.push({ id: String(call['id'] ?? call['name']), name: String(call['name']) });
      else if (isObj(response)) {
        const text = textOf(response['response']);
        facts.answers.push({ callId: String(response['id'] ?? response['name']), text });
        facts.texts.push(text);
      } else if (typeof part['text'] === 'string') facts.texts.push(part['text']);
    }
  }
  return facts;
}

/** How many times `needle` occurs across the texts. */
export function occurrences(texts: string[], needle: string): number {
  return texts.reduce((n, t) => n + t.split(needle).length - 1, 0);
}
