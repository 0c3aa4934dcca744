/**
 * What the engine tells front ends while a turn runs: a typed union in the
 * manner of a provider stream-part union. Front ends map these to their own
 * protocol (src/frontends/shared for stream-json); none of them parses wire JSON to
 * learn what happened.
 */
import type { StopReason, Usage } from '../providers/provider.js';
import type { Part, TurnAbortReason } from '../session/records.js';

export interface ToolCallInfo {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** How a tool call ended, as recorded. */
export type ToolCallStatus = 'success' | 'error' | 'denied' | 'cancelled' | 'not_started';

export type TurnStatus = 'success' | 'error' | 'max_turns' | 'aborted';

export interface PermissionDenial {
  toolName: string;
  toolUseId: string;
  toolInput: Record<string, unknown>;
}

/** The domain result of one turn; protocols render it (a stream-json `result`, an ACP stopReason). */
export interface TurnOutcome {
  status: TurnStatus;
  /** The last assistant text of the turn (success only). */
  text?: string;
  error?: { code: string; message: string };
  abortReason?: TurnAbortReason;
  durationMs: number;
  apiDurationMs: number;
  numTurns: number;
  usage: Usage;
  permissionDenials: PermissionDenial[];
}

export type EngineEvent =
  | { type: 'turn_started'; trigger: 'prompt' | 'continuation' }
  | { type: 'user_prompt'; uuid: string; parts: Part[] }
  /** The tool results a recovery continuation wrote to close the interrupted turn. */
  | { type: 'recovery_results'; planId: string; uuids: string[]; parts: Part[] }
  | { type: 'message_start'; messageId: string; model: string }
  | { type: 'text_delta'; messageId: string; text: string }
  | { type: 'thought_delta'; messageId: string; text: string }
  | { type: 'tool_input_start'; messageId: string; index: number; callId: string; name: string }
  | { type: 'tool_input_delta'; messageId: string; index: number; delta: string }
  | { type: 'message_end'; messageId: string; stopReason: StopReason; usage: Usage }
  /** A model response as recorded (uuid of its record; absent when nothing was recorded). */
  | { type: 'assistant_message'; uuid: string; messageId: string; model: string; parts: Part[]; stopReason: string | null; usage: Usage }
  | { type: 'tool_approval_requested'; call: ToolCallInfo }
  | { type: 'tool_call_started'; call: ToolCallInfo }
  | { type: 'tool_call_finished'; uuid: string; call: ToolCallInfo; status: ToolCallStatus; isError: boolean; output: string; display?: string; result: Part }
  | { type: 'warning'; code: string; message: string }
  | { type: 'turn_finished'; outcome: TurnOutcome }
  | { type: 'turn_failed'; outcome: TurnOutcome }
  | { type: 'turn_aborted'; outcome: TurnOutcome };
