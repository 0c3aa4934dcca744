/** An in-memory Transport for Query unit tests: the test plays the CLI. */
import { AsyncQueue } from '../../src/sdk/async-queue.js';
import type { ExitInfo, Transport } from '../../src/sdk/process-transport.js';
import { checkMessage, type InboundMessage } from '../../src/sdk/validate-message.js';

export class FakeTransport implements Transport {
  readonly written: Array<Record<string, unknown>> = [];
  readonly raw: string[] = [];
  inputEnded = false;
  closed = false;
  started = false;
  private readonly queue = new AsyncQueue<InboundMessage>();
  private resolveExited!: (info: ExitInfo) => void;
  readonly exited = new Promise<ExitInfo>((resolve) => (this.resolveExited = resolve));
  private waiters: Array<{ match: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void }> = [];

  async start(): Promise<void> {
    this.started = true;
  }

  async write(message: object | string): Promise<void> {
    if (this.inputEnded || this.closed) throw new Error('input closed');
    if (typeof message === 'string') {
      this.raw.push(message);
      return;
    }
    const m = JSON.parse(JSON.stringify(message)) as Record<string, unknown>;
    this.written.push(m);
    this.waiters = this.waiters.filter((w) => (w.match(m) ? (w.resolve(m), false) : true));
  }

  endInput(): void {
    this.inputEnded = true;
  }

  readMessages(): AsyncIterable<InboundMessage> {
    return this.queue;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.inputEnded = true;
    this.exit({ exitCode: 0, signal: null, closedByHost: true });
  }

  /** The CLI prints a line. */
  emit(message: Record<string, unknown>): void {
    this.queue.push(checkMessage({ ...message } as InboundMessage));
  }

  exit(info: ExitInfo, error?: unknown): void {
    if (error) this.queue.fail(error);
    else this.queue.end();
    this.resolveExited(info);
  }

  /** Resolves with the next written line that matches (or one already written). */
  nextWrite(match: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const seen = this.written.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  controlRequest(subtype: string): Promise<Record<string, unknown>> {
    return this.nextWrite((m) => m['type'] === 'control_request' && (m['request'] as { subtype?: string }).subtype === subtype);
  }

  /** Answers a host control request the way the CLI does. */
  succeed(request: Record<string, unknown>, response: Record<string, unknown> = {}): void {
    this.emit({ type: 'control_response', response: { subtype: 'success', request_id: request['request_id'], response } });
  }

  fail(request: Record<string, unknown>, error: string, code: string): void {
    this.emit({ type: 'control_response', response: { subtype: 'error', request_id: request['request_id'], error, code } });
  }
}

const SID = '11111111-2222-4333-8444-555555555555';
let n = 0;
const uuid = (): string => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;

export function initLine(resumed: boolean): Record<string, unknown> {
  return {
    type: 'system',
    subtype: 'init',
    uuid: uuid(),
    session_id: SID,
    cwd: '/tmp/p',
    tools: ['read_file'],
    model: 'scripted',
    permission_mode: 'default',
    mend_version: '0.1.0',
    resumed,
    capabilities: { recovery: true, continue_last_turn: true, get_recovery_plan: true, interrupt: true, can_use_tool: true },
  };
}

export function summary(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    plan_id: 'rp_abc',
    kind: 'interrupted_turn',
    recovered: true,
    cause: 'crash',
    can_continue: true,
    can_auto_continue: false,
    requires_user_confirmation: true,
    previous_attempts: 0,
    visible_notice: 'the last turn was interrupted',
    repairs: [{ type: 'synthesized_tool_result', count: 1 }],
    repair_details: [{ type: 'synthesized_tool_result', callId: 'c1', name: 'run_shell_command' }],
    continuation: { mode: 'tool_result_parts', display_text: 'continue', part_count: 1 },
    history: { records: 3, api_entries: 3, gaps: 0, malformed_lines: 0, torn_tail: false },
    ...overrides,
  };
}

export function recoveryLine(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'system', subtype: 'recovery', uuid: uuid(), session_id: SID, ...summary(), action: 'awaiting_confirmation', ...overrides };
}

export function assistantLine(text: string): Record<string, unknown> {
  return {
    type: 'assistant',
    uuid: uuid(),
    session_id: SID,
    parent_tool_use_id: null,
    message: {
      id: `msg_${uuid()}`,
      type: 'message',
      role: 'assistant',
      model: 'scripted',
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  };
}

export function resultLine(result = 'done', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'result',
    subtype: 'success',
    uuid: uuid(),
    session_id: SID,
    is_error: false,
    duration_ms: 1,
    duration_api_ms: 1,
    num_turns: 1,
    result,
    usage: { input_tokens: 1, output_tokens: 1 },
    permission_denials: [],
    ...overrides,
  };
}

export const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));
