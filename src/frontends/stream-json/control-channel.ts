/**
 * Where the control protocol runs: ndjson requests in, ndjson messages out. The
 * server only reads `input` and writes `output` (as the MCP SDK's Transport and
 * ACP's ndJsonStream keep framing apart from the protocol), so the same server
 * runs over the process's stdio, a socket (one Duplex as both ends) or an
 * in-memory pair in tests.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';

export interface ControlChannel {
  input: Readable;
  output: Writable;
}

/** The host's stdin and stdout (`--input-format stream-json`). */
export function stdioChannel(host: { stdin: Readable; stdout: Writable }): ControlChannel {
  return {
    get input() {
      return host.stdin;
    },
    output: host.stdout,
  };
}

/** Two channels joined in memory: what one side writes, the other reads. */
export function memoryChannelPair(): { server: ControlChannel; client: ControlChannel } {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  return { server: { input: toServer, output: toClient }, client: { input: toClient, output: toServer } };
}
