/**
 * mend's SDK. Process-backed: `query()` runs the mend CLI in stream-json mode.
 * Daemon-backed: `connect({url, token})` to a `mend serve` and `client.query()`.
 * Both expose the same Query: messages, control protocol and session recovery.
 */
import { ProcessTransport } from './process-transport.js';
import { Query } from './query.js';
import type { QueryParams } from './types.js';

export function query({ prompt, options = {} }: QueryParams = {}): Query {
  return new Query(new ProcessTransport(options), {
    prompt,
    canUseTool: options.canUseTool,
    abortSignal: options.abortSignal,
    startupTimeoutMs: options.startupTimeoutMs,
    mcpServers: options.mcpServers,
  });
}

export { Query, type QueryConfig, type McpServerOption } from './query.js';
export { createSdkMcpServer, tool, type SdkMcpServerConfig, type SdkMcpToolDefinition } from './sdk-mcp-server.js';
export { ProcessTransport, STDERR_TAIL_BYTES, type ExitInfo } from './process-transport.js';
export type { Transport } from './transport.js';
export { connect, MendDaemonClient, type DaemonQueryOptions, type DaemonQueryParams } from './daemon-client.js';
export { DaemonTransport, type DaemonSessionOptions } from './daemon-transport.js';
export { DaemonHttp, MendDaemonError, type DaemonConnection } from './daemon-http.js';
export { MendAbortError, MendCliError, MendControlError, MendProcessError, MendSdkError, isMendProcessError } from './errors.js';
export { optionsToArgs, defaultExecutable } from './options-to-args.js';
export { validationIssues, type InboundMessage } from './validate-message.js';
export type * from './types.js';
export {
  isRecoveryMessage,
  recoveryMessageOf,
  continueInterruptedArgs,
  continueLastTurn as continueLastTurnViaClaudeQuery,
  type ClaudeQueryLike,
} from './claude-host.js';
