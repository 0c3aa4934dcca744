/**
 * Public types of the SDK. Message types are inferred from the zod schemas of
 * src/wire, the same ones the CLI builds its output with.
 */
import type { ContinueLastTurnAnswer, InputUserMessage } from '../wire/control.js';
import type {
  AssistantMessage,
  OutputMessage,
  RecoverySummary,
  ResultMessage,
  StreamEventMessage,
  SystemErrorMessage,
  SystemInitMessage,
  SystemRecoveryMessage,
  UserMessage,
} from '../wire/messages.js';

export type { Capabilities, ContentBlock, RecoveryAction, RecoverySummary } from '../wire/messages.js';
export type { ContinueLastTurnAnswer } from '../wire/control.js';

export type SDKInitMessage = SystemInitMessage;
export type SDKRecoveryMessage = SystemRecoveryMessage;
export type SDKSystemErrorMessage = SystemErrorMessage;
export type SDKAssistantMessage = AssistantMessage;
/** A user message printed by the CLI (tool results). */
export type SDKUserMessage = UserMessage;
export type SDKPartialAssistantMessage = StreamEventMessage;
export type SDKResultMessage = ResultMessage;

/**
 * What iterating a Query yields. At run time a newer CLI may also send messages of a
 * type (or system subtype) not listed here; they are passed through untouched, so
 * keep a default branch. A message of a known type that failed validation is passed
 * through too, flagged: see `validationIssues()`.
 */
export type SDKMessage = OutputMessage;

/** A user message the host sends; `session_id` and `parent_tool_use_id` are filled in when missing. */
export type SDKUserMessageInput = Omit<InputUserMessage, 'session_id' | 'parent_tool_use_id'> & {
  session_id?: string;
  parent_tool_use_id?: string | null;
};

/** mend's approval modes (one source: src/wire/approval-modes.ts). */
export type { ApprovalMode as PermissionMode } from '../wire/approval-modes.js';
import type { ApprovalMode as PermissionMode } from '../wire/approval-modes.js';

/** What canUseTool answers (one schema: PermissionResultSchema in src/wire/control.ts). */
export type { PermissionResult } from '../wire/control.js';
import type { PermissionResult } from '../wire/control.js';

export type CanUseTool = (toolName: string, input: Record<string, unknown>, context: { toolUseId: string; signal: AbortSignal }) => Promise<PermissionResult>;

export interface ShutdownOptions {
  /** After ending stdin, how long to wait for the CLI to exit on its own before SIGTERM (default 250 ms). */
  stdinGraceMs?: number;
  /** After SIGTERM, how long to wait before SIGKILL (default 5000 ms). */
  killGraceMs?: number;
}

export interface Options {
  /** Working directory of the CLI (its project root). Default: process.cwd(). */
  cwd?: string;
  /** Resume the most recent session of the project (`--continue`). */
  continue?: boolean;
  /** Resume a session by UUID or .jsonl path (`--resume`). */
  resume?: string;
  /** With continue/resume: copy the session into a new one (`--fork-session`). */
  forkSession?: boolean;
  /** Start a new session with this UUID (`--session-id`). */
  sessionId?: string;
  model?: string;
  provider?: 'openai' | 'scripted';
  baseUrl?: string;
  /** Path of a JSON file of scripted model responses (`--scripted-responses`). */
  scriptedResponses?: string;
  /** Merged over process.env; a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  approvalMode?: PermissionMode;
  allowedTools?: string[];
  /** More directories the file tools may use besides the project root (`--add-dir`). */
  addDirs?: string[];
  /** Replaces the built-in system prompt (`--system-prompt`). */
  systemPrompt?: string;
  /** Appended to the system prompt (`--append-system-prompt`). */
  appendSystemPrompt?: string;
  /** When given, the SDK sends `initialize` first and the CLI asks the host before running tools that need approval. */
  canUseTool?: CanUseTool;
  includePartialMessages?: boolean;
  /** Let the recovery plan auto-continue where policy allows it (`--auto-continue`). */
  allowAutoContinue?: boolean;
  /** The CLI to run. A .js/.mjs/.cjs file runs with process.execPath. Default: this package's bin/mend.js. */
  pathToExecutable?: string;
  /** More CLI arguments, appended last. */
  extraArgs?: string[];
  /** Aborting closes the CLI; the iterator then throws an AbortError (MendAbortError). */
  abortSignal?: AbortSignal;
  /** Called with each chunk the CLI writes to stderr. */
  stderr?: (data: string) => void;
  /** Timeouts of close(). */
  shutdown?: ShutdownOptions;
  /** How long to wait for the CLI's init line before failing with `startup_timeout` (default 30 s). */
  startupTimeoutMs?: number;
  /**
   * MCP servers of the session, by name: `createSdkMcpServer(...)` (runs in this process) or an entry
   * the CLI starts (`{command, args, env}` | `{type: "http" | "sse", url, headers}`). Sent in `initialize`;
   * the model sees their tools as `mcp__<name>__<tool>`.
   */
  mcpServers?: Record<string, SdkMcpServerConfig | Record<string, unknown>>;
}

import type { SdkMcpServerConfig } from './sdk-mcp-server.js';

export type Prompt = string | AsyncIterable<SDKUserMessageInput> | undefined;

export interface QueryParams {
  prompt?: Prompt;
  options?: Options;
}

/** The answer to `continue_last_turn`. */
export type ContinueLastTurnResult = ContinueLastTurnAnswer;
