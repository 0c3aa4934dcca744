/**
 * Runs `mend --acp` on the process's stdio: ndjson JSON-RPC in on stdin, out on
 * stdout (nothing else may go there), diagnostics on stderr. Ends when the client
 * closes stdin or a signal stops mend; running turns are then interrupted (recorded
 * as aborted) and every lease is released.
 */
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import type { HostEnv } from '../../runtime/host-env.js';
import { ExitCode } from '../../wire/exit-codes.js';
import { AcpAgent, type AcpOptions } from './acp-agent.js';

/** Time for the last answers to reach stdout before the connection closes on a signal. */
const ANSWER_FLUSH_MS = 100;

export async function runAcp(options: AcpOptions, host: HostEnv): Promise<number> {
  const stream = acp.ndJsonStream(
    Writable.toWeb(host.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(host.stdin) as unknown as ReadableStream<Uint8Array>,
  );
  const agent = new AcpAgent(options, host);
  const connection = agent.app().connect(stream);
  // The runtime stops the running turns on the signal itself (recorded as aborted with its
  // reason); once they have ended and their prompts got their `cancelled` answer, the
  // connection closes and mend exits.
  const onSignal = () =>
    setImmediate(() => {
      void agent
        .closeAll()
        .then(() => new Promise((resolve) => setTimeout(resolve, ANSWER_FLUSH_MS)))
        .finally(() => connection.close());
    });
  host.signal.addEventListener('abort', onSignal, { once: true });
  try {
    await connection.closed;
    await agent.closeAll();
  } finally {
    host.signal.removeEventListener('abort', onSignal);
  }
  if (host.signal.aborted) return host.signal.reason === 'sigterm' ? ExitCode.sigterm : ExitCode.sigint;
  return ExitCode.success;
}
