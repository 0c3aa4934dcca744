/** Helpers for SDK tests against the built CLI (run `npm run build` first). */
import type { Options, SDKMessage, SDKUserMessageInput } from '../../src/sdk/index.js';
import { query, type ProcessTransport, type Query } from '../../src/sdk/index.js';
import { readLog, sessionFiles, type Sandbox } from '../support/cli.js';
import type { ChatRecord } from '../../src/session/records.js';

/** Options for a run in the sandbox: its cwd, MEND_HOME and HOME; scripted model when a script is given. */
export function sdkOptions(sb: Sandbox, script?: string, extra: Options = {}): Options & { stderrText: () => string } {
  let stderr = '';
  return {
    cwd: sb.cwd,
    env: { MEND_HOME: sb.home, HOME: sb.root, OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, MEND_FAULT: undefined },
    ...(script !== undefined ? { provider: 'scripted' as const, scriptedResponses: script } : {}),
    stderr: (d) => (stderr += d),
    ...extra,
    stderrText: () => stderr,
  };
}

/** A prompt the test feeds message by message. */
export class Channel implements AsyncIterable<SDKUserMessageInput> {
  private readonly items: SDKUserMessageInput[] = [];
  private wake: (() => void) | null = null;
  private closed = false;

  send(text: string): void {
    this.items.push({ type: 'user', message: { role: 'user', content: text } });
    this.wake?.();
  }

  end(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SDKUserMessageInput> {
    for (;;) {
      const item = this.items.shift();
      if (item) {
        yield item;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = null;
    }
  }
}

export function pidOf(q: Query): number {
  const pid = (q.transport as ProcessTransport).pid;
  if (pid === undefined) throw new Error('no pid');
  return pid;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function collect(q: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const out: SDKMessage[] = [];
  for await (const m of q) out.push(m);
  return out;
}

/** Reads messages until one matches (the query keeps running). */
export async function nextMatching<T extends SDKMessage>(q: Query, pred: (m: SDKMessage) => m is T): Promise<T>;
export async function nextMatching(q: Query, pred: (m: SDKMessage) => boolean): Promise<SDKMessage>;
export async function nextMatching(q: Query, pred: (m: SDKMessage) => boolean): Promise<SDKMessage> {
  for (;;) {
    const r = await q.next();
    if (r.done) throw new Error('the query ended first');
    if (pred(r.value)) return r.value;
  }
}

export function assistantText(messages: SDKMessage[]): string {
  return messages
    .flatMap((m) => (m.type === 'assistant' ? m.message.content : []))
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('');
}

export function onlyLog(sb: Sandbox): ChatRecord[] {
  const files = sessionFiles(sb);
  if (files.length !== 1) throw new Error(`expected one session log, found ${files.length}`);
  return readLog(files[0]!);
}

export { query };

/** Fails fast (instead of at the test timeout) with a message naming what did not happen. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
