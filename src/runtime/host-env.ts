/**
 * The one host environment a front end is given by the composition root
 * (src/cli/main.ts): the process's stdio and stop signal, plus everything a
 * SessionRuntime needs. Front ends read no environment variables and install no
 * signal handlers themselves.
 */
import type { Readable, Writable } from 'node:stream';
import type { RuntimeDeps } from './session-runtime.js';

export interface HostEnv {
  /** May be a getter that makes the stream when first read: read it only when stdin is used. */
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
  /** Aborted with 'sigint' | 'sigterm' by the signal handlers main() installs. */
  signal: AbortSignal;
  runtime: RuntimeDeps;
  /** `runtime` for the project of another directory: front ends whose sessions name their own cwd (ACP). */
  runtimeFor?: (cwd: string) => RuntimeDeps;
  /** The model name `init` shows before any provider is built (null when none is configured). */
  modelName: (model: string | undefined) => string | null;
  /** Names of the tools offered to the model. */
  toolNames: readonly string[];
}
