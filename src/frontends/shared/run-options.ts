/**
 * What the command line asks of a stdio front end (headless or stream-json).
 * The CLI's parsed options satisfy it; front ends depend on this shape, not on
 * src/cli.
 */
import type { ApprovalMode } from '../../wire/approval-modes.js';
import type { McpServerSpec } from '../../tools/mcp/mcp-config.js';

export type OutputFormat = 'text' | 'json' | 'stream-json';

export interface StdioRunOptions {
  prompt: string | undefined;
  /** `-p -`: read the prompt from stdin. */
  promptFromStdin: boolean;
  continue: boolean;
  resume: string | undefined;
  sessionId: string | undefined;
  forkSession: boolean;
  outputFormat: OutputFormat;
  inputFormat: 'text' | 'stream-json';
  includePartialMessages: boolean;
  continueInterrupted: boolean;
  planId: string | undefined;
  autoContinue: boolean;
  acceptDegraded: boolean;
  approvalMode: ApprovalMode;
  /** The mode as the caller named it (Claude's acceptEdits, dontAsk…): answers and `init` use the caller's word. */
  approvalModeName?: string | undefined;
  /**
   * Who answers `can_use_tool`: `stdio` the host declared it (--permission-prompt-tool=stdio),
   * `after_initialize` mend's protocol (a host that sent initialize), `never` a Claude-dialect host without canUseTool.
   */
  permissionPrompts?: 'stdio' | 'after_initialize' | 'never' | undefined;
  allowedTools: string[];
  maxTurns: number;
  model: string | undefined;
  debug: boolean;
  /** Text mode: show every step's text, not only the final answer. Changes nothing in the other formats. */
  verbose: boolean;
  /** Flags accepted for compatibility that mean nothing here (debug-noted). */
  ignoredFlags: string[];
  permissionTimeoutMs: number;
  systemPrompt: string | undefined;
  appendSystemPrompt: string | undefined;
  /** Only these tools are offered (Qwen's --core-tools); undefined: all. */
  coreTools: string[] | undefined;
  /** Never offered, never run (Qwen's --exclude-tools). */
  excludeTools: string[];
  /** MCP servers started with the session (--mcp-config, the settings file), resolved by the composition root. */
  mcpServers?: McpServerSpec[] | undefined;
  /** Configured servers whose entry could not be used: listed as failed in `init`. */
  mcpFailed?: { name: string; error: string }[] | undefined;
}
