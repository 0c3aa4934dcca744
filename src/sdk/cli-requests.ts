/**
 * Requests the CLI sends to the host: `can_use_tool` goes to the canUseTool
 * callback, `mcp_message` to the host's in-process MCP server of that name,
 * anything else is answered with an error (never left unanswered).
 * `control_cancel_request` aborts the callback's signal and suppresses the answer.
 */
import { PermissionResultSchema } from '../wire/control.js';
import { MendSdkError } from './errors.js';
import type { CanUseTool } from './types.js';
import { validationIssues, type InboundMessage } from './validate-message.js';

export type ControlAnswer = { response: Record<string, unknown> } | { error: string; code: string };

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export class CliRequestHandler {
  private readonly inFlight = new Map<string, AbortController>();

  constructor(
    private readonly canUseTool: CanUseTool | undefined,
    /** Writes the control_response; called at most once per request. */
    private readonly answer: (requestId: string, answer: ControlAnswer) => Promise<void>,
    /** Called whenever a request finishes (the Query may then end stdin). */
    private readonly onSettled: () => void,
    /** Hands a message to the named in-process MCP server; resolves with its reply (undefined for a notification). */
    private readonly mcpMessage?: (server: string, message: Record<string, unknown>) => Promise<unknown>,
  ) {}

  /** Number of requests still waiting for the callback. */
  get pending(): number {
    return this.inFlight.size;
  }

  cancel(requestId: string): void {
    this.inFlight.get(requestId)?.abort(new MendSdkError('cancelled', 'the CLI cancelled this request'));
  }

  abortAll(reason: unknown): void {
    for (const c of this.inFlight.values()) c.abort(reason);
  }

  async handle(m: InboundMessage): Promise<void> {
    const id = m['request_id'];
    if (typeof id !== 'string') return;
    const request = record(m['request']);
    const issues = validationIssues(m);
    if (issues !== undefined) return this.answer(id, { error: `malformed control request: ${issues}`, code: 'invalid_request' });
    if (request?.['subtype'] === 'mcp_message') return this.handleMcp(id, request);
    if (request?.['subtype'] !== 'can_use_tool') {
      return this.answer(id, { error: `the SDK does not handle ${String(request?.['subtype'])}`, code: 'unsupported_request' });
    }
    if (!this.canUseTool) return this.answer(id, { response: { behavior: 'deny', message: 'the host has no canUseTool callback' } });
    const controller = new AbortController();
    this.inFlight.set(id, controller);
    // A callback that ignores its signal must not hold the query open: a cancel, an
    // interrupt or close settles the request at once, whatever the callback does later.
    const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
    aborted.catch(() => {});
    try {
      const decision = await Promise.race([
        this.canUseTool(String(request['tool_name']), record(request['input']) ?? {}, {
          toolUseId: String(request['tool_use_id']),
          signal: controller.signal,
        }),
        aborted,
      ]);
      if (controller.signal.aborted) return;
      if (!PermissionResultSchema.safeParse(decision).success) {
        return await this.answer(id, { error: 'canUseTool returned neither allow nor deny', code: 'invalid_permission_result' });
      }
      await this.answer(id, { response: decision as Record<string, unknown> });
    } catch (error) {
      if (controller.signal.aborted) return;
      await this.answer(id, { error: `canUseTool failed: ${error instanceof Error ? error.message : String(error)}`, code: 'callback_failed' });
    } finally {
      this.inFlight.delete(id);
      this.onSettled();
    }
  }

  private async handleMcp(id: string, request: Record<string, unknown>): Promise<void> {
    const server = String(request['server_name']);
    const message = record(request['message']);
    if (!this.mcpMessage || !message) return this.answer(id, { error: `no SDK MCP server named ${JSON.stringify(server)}`, code: 'unknown_server' });
    this.inFlight.set(id, new AbortController());
    try {
      const reply = await this.mcpMessage(server, message);
      // A notification has no reply; the CLI reads an empty result (Claude's and Qwen's SDKs answer the same).
      await this.answer(id, { response: { mcp_response: reply ?? { jsonrpc: '2.0', result: {}, id: 0 } } });
    } catch (error) {
      await this.answer(id, { error: error instanceof Error ? error.message : String(error), code: 'mcp_error' });
    } finally {
      this.inFlight.delete(id);
      this.onSettled();
    }
  }
}
