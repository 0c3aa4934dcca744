/**
 * `can_use_tool` requests from mend to the host (stream-json input after
 * `initialize`): each waits for the host's `control_response`, a cancel, a
 * timeout, end of stdin, or an abort of the turn. Anything but an explicit
 * allow is a refusal.
 */
import type { ApprovalDecision } from '../../engine/agent-session.js';
import { PermissionResultSchema, type CliOutboundControl } from '../../wire/control.js';
import type { AskHost } from '../../runtime/tool-port.js';

type Answer = { subtype?: string; response?: unknown; error?: string };

export class HostApprovals {
  private readonly pending = new Map<string, (answer: Answer) => void>();
  private seq = 0;
  private closed = false;
  /** Requests mend stopped waiting for (and told the host so): their late answers are dropped quietly. */
  private readonly cancelled = new Set<string>();

  constructor(
    private readonly emit: (message: CliOutboundControl) => void,
    private readonly timeoutMs: () => number,
  ) {}

  /** Settles a pending request with the host's answer; false when no such request is pending. */
  settle(requestId: string, answer: Answer): boolean {
    const resolve = this.pending.get(requestId);
    if (!resolve) return false;
    resolve(answer);
    return true;
  }

  wasCancelled(requestId: string): boolean {
    return this.cancelled.has(requestId);
  }

  /** Stops waiting for a request and tells the host, so its callback can stop too. */
  private cancel(requestId: string): void {
    this.cancelled.add(requestId);
    // A long session must not grow this without bound; the oldest ids are the least likely to be answered late.
    if (this.cancelled.size > 1000) this.cancelled.delete(this.cancelled.values().next().value as string);
    this.emit({ type: 'control_cancel_request', request_id: requestId });
  }

  /** End of stdin: nobody can answer any more. */
  close(): void {
    this.closed = true;
    for (const id of [...this.pending.keys()]) this.settle(id, { subtype: 'error', error: 'stdin closed before the host answered' });
  }

  readonly ask: AskHost = async (call, signal) => {
    if (this.closed) return { allow: false, message: `Permission denied for ${call.name}: stdin is closed, the host cannot be asked` };
    const requestId = `mend_${++this.seq}`;
    const timeoutMs = this.timeoutMs();
    const answer = await new Promise<Answer>((resolve) => {
      const finish = (value: Answer) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.pending.delete(requestId);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.cancel(requestId);
        finish({ subtype: 'error', error: `no answer from the host within ${timeoutMs} ms` });
      }, timeoutMs);
      const onAbort = () => {
        this.cancel(requestId);
        finish({ subtype: 'error', error: 'turn aborted while waiting for approval' });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(requestId, finish);
      this.emit({
        type: 'control_request',
        request_id: requestId,
        request: { subtype: 'can_use_tool', tool_name: call.name, tool_use_id: call.id, input: call.args },
      });
    });
    return toDecision(call.name, answer);
  };
}

function toDecision(toolName: string, answer: Answer): ApprovalDecision {
  if (answer.subtype !== 'success') return { allow: false, message: `Permission denied for ${toolName}: ${answer.error ?? 'no answer from the host'}` };
  const permission = PermissionResultSchema.safeParse(answer.response);
  if (!permission.success) return { allow: false, message: `Permission denied for ${toolName}: the host's answer was not understood` };
  if (permission.data.behavior === 'allow') {
    return permission.data.updatedInput ? { allow: true, args: permission.data.updatedInput } : { allow: true };
  }
  const why = permission.data.message ? `: ${permission.data.message}` : '';
  const interrupt = (permission.data as { interrupt?: unknown }).interrupt === true;
  return { allow: false, message: `Permission denied by the host for ${toolName}${why}`, ...(interrupt ? { interrupt } : {}) };
}
