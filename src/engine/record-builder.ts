/**
 * Builds the records mend appends, chained to the current leaf. Ids and clock are
 * injected so tests (and the crash harness) can make runs reproducible.
 */
import type {
  AssistantRecord,
  ChatRecord,
  Part,
  RecoveryDebugPayload,
  SystemRecord,
  ToolResultRecord,
  TurnAbortReason,
  UserRecord,
} from '../session/records.js';
import { MEND_VERSION_PREFIX } from '../session/records.js';

export interface RecordContext {
  sessionId: string;
  cwd: string;
  version: string;
  newId: () => string;
  now: () => string;
}

export class RecordBuilder {
  constructor(
    private readonly ctx: RecordContext,
    /** The uuid the next record points at; null for an empty session. */
    public leafUuid: string | null,
  ) {}

  private base(): Pick<ChatRecord, 'uuid' | 'parentUuid' | 'sessionId' | 'timestamp' | 'cwd' | 'version'> {
    return {
      uuid: this.ctx.newId(),
      parentUuid: this.leafUuid,
      sessionId: this.ctx.sessionId,
      timestamp: this.ctx.now(),
      cwd: this.ctx.cwd,
      version: `${MEND_VERSION_PREFIX}${this.ctx.version}`,
    };
  }

  /** Moves the leaf; call once the record is on disk. */
  advance(record: ChatRecord): void {
    this.leafUuid = record.uuid;
  }

  user(parts: Part[]): UserRecord {
    const { uuid, parentUuid, sessionId, timestamp, cwd, version } = this.base();
    return { uuid, parentUuid, sessionId, timestamp, type: 'user', provenance: 'real_user', cwd, version, message: { role: 'user', parts } };
  }

  assistant(parts: Part[], model: string, usage: { inputTokens: number; outputTokens: number }): AssistantRecord {
    const { uuid, parentUuid, sessionId, timestamp, cwd, version } = this.base();
    return {
      uuid,
      parentUuid,
      sessionId,
      timestamp,
      type: 'assistant',
      provenance: 'assistant_output',
      cwd,
      version,
      model,
      message: { role: 'model', parts },
      usageMetadata: { promptTokenCount: usage.inputTokens, candidatesTokenCount: usage.outputTokens },
    };
  }

  toolResult(
    part: Part & { functionResponse: NonNullable<Part['functionResponse']> },
    status: 'success' | 'error' | 'cancelled',
    opts: { display?: string; synthetic?: { planId: string }; executedArgs?: Record<string, unknown> } = {},
  ): ToolResultRecord {
    const { uuid, parentUuid, sessionId, timestamp, cwd, version } = this.base();
    const response = part.functionResponse.response;
    const record: ToolResultRecord = {
      uuid,
      parentUuid,
      sessionId,
      timestamp,
      type: 'tool_result',
      provenance: 'tool_result',
      cwd,
      version,
      message: { role: 'user', parts: [part] },
      toolCallResult: {
        callId: part.functionResponse.id ?? '',
        status,
        ...(opts.display !== undefined ? { resultDisplay: opts.display } : {}),
        ...(status !== 'success' ? { error: response['error'] ?? response['output'] } : {}),
        // What actually ran when a host substituted the arguments: the log must not claim the model's did.
        ...(opts.executedArgs !== undefined ? { executedArgs: opts.executedArgs, argsChangedByHost: true } : {}),
      },
    };
    if (opts.synthetic) record.recovery = { planId: opts.synthetic.planId, synthetic: true };
    return record;
  }

  system(subtype: string, systemPayload: unknown): SystemRecord {
    const { uuid, parentUuid, sessionId, timestamp, cwd, version } = this.base();
    return { uuid, parentUuid, sessionId, timestamp, type: 'system', provenance: 'system', cwd, version, subtype, systemPayload };
  }

  /** A run that ended with a known error (provider error, cut stream, max turns): a failure, not a crash. */
  turnFailed(code: string, message: string): SystemRecord {
    return this.system('turn_failed', { code, message });
  }

  turnAborted(reason: TurnAbortReason): SystemRecord {
    return this.system('turn_aborted', { reason });
  }

  recovery(payload: RecoveryDebugPayload): SystemRecord {
    return this.system('recovery', payload);
  }
}
