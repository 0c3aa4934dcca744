/**
 * The seam between a Query and whatever runs the session: the mend CLI as a
 * child process (ProcessTransport) or a session of a `mend serve` daemon over
 * HTTP + SSE (DaemonTransport). Both speak the stream-json protocol to the
 * Query: user messages and control requests go in, output messages, control
 * answers and the peer's own requests (`can_use_tool`) come out.
 */
import type { MendSdkError } from './errors.js';
import type { InboundMessage } from './validate-message.js';

export interface Transport {
  start(): Promise<void>;
  /** An object is sent as one stream-json message; a string is written as it is (raw bytes, process transport only). */
  write(message: object | string): Promise<void>;
  /**
   * The host will send nothing more: the peer finishes what it was asked, then
   * the message stream ends (the CLI exits; a daemon session is detached from).
   */
  endInput(): void;
  /** Every message of the session, in order. Ends when the peer is done; throws when it failed. */
  readMessages(): AsyncIterable<InboundMessage>;
  /** Ends the connection to the peer (and the message stream). Safe to call more than once. */
  close(): Promise<void>;
  /** The error requests still waiting for an answer get when the stream ends normally. */
  endedError?(): MendSdkError;
}
