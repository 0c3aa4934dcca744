/**
 * Tool approvals asked inline in the terminal UI: one question at a time, the
 * answer allow once, allow always (for this session: the set is dropped with
 * the runtime), or deny. An aborted turn or a closed session is a denial.
 */
import type { ApprovalDecision } from '../../engine/agent-session.js';
import type { ToolCallInfo } from '../../engine/engine-events.js';
import type { AskHost } from '../../runtime/tool-port.js';

export type ApprovalChoice = 'once' | 'always' | 'deny';

export class InlineApprovals {
  private readonly alwaysAllowed = new Set<string>();
  private pending: { call: ToolCallInfo; settle: (decision: ApprovalDecision) => void } | null = null;

  /** `show` is told the call that waits for an answer, and null once it has one. */
  constructor(private readonly show: (call: ToolCallInfo | null) => void) {}

  readonly ask: AskHost = (call, signal) => {
    if (this.alwaysAllowed.has(call.name)) return Promise.resolve({ allow: true });
    return new Promise<ApprovalDecision>((resolve) => {
      const onAbort = () => this.settle({ allow: false, message: 'turn aborted while waiting for approval' });
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending = {
        call,
        settle: (decision) => {
          signal.removeEventListener('abort', onAbort);
          resolve(decision);
        },
      };
      this.show(call);
    });
  };

  get waiting(): boolean {
    return this.pending !== null;
  }

  answer(choice: ApprovalChoice): void {
    const call = this.pending?.call;
    if (!call) return;
    if (choice === 'always') this.alwaysAllowed.add(call.name);
    this.settle(choice === 'deny' ? { allow: false, message: `Permission denied by the user for ${call.name}` } : { allow: true });
  }

  /** Denies what waits (an interrupt, a closed session). */
  deny(message: string): void {
    this.settle({ allow: false, message });
  }

  /** A new session: "always" answers do not carry over. */
  reset(): void {
    this.deny('the session was closed while waiting for approval');
    this.alwaysAllowed.clear();
  }

  private settle(decision: ApprovalDecision): void {
    const pending = this.pending;
    this.pending = null;
    if (!pending) return;
    this.show(null);
    pending.settle(decision);
  }
}
