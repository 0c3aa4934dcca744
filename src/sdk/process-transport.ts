/**
 * The CLI as a child process: spawn it in stream-json mode, write ndjson to its
 * stdin, frame and validate its stdout continuously into a queue, keep a bounded
 * stderr tail, and shut it down politely (end stdin, SIGTERM, SIGKILL).
 */
import type { ResultPromise } from 'execa';
import { DEFAULT_MAX_LINE_BYTES, LineFramer, serializeLine, type FramedLine } from '../wire/line-framer.js';
import { AsyncQueue } from './async-queue.js';
import { MendProcessError, MendSdkError } from './errors.js';
import { commandFor, defaultExecutable, mergeEnv, optionsToArgs } from './options-to-args.js';
import type { Options } from './types.js';
import type { Transport } from './transport.js';
import { checkMessage, isInboundMessage, type InboundMessage } from './validate-message.js';

export type { Transport } from './transport.js';

export interface ExitInfo {
  exitCode: number | null;
  signal: string | null;
  /** True when the exit followed close(): never an error, whatever the code. */
  closedByHost: boolean;
}

export const STDERR_TAIL_BYTES = 64 * 1024;
const DEFAULT_STDIN_GRACE_MS = 250;
const DEFAULT_KILL_GRACE_MS = 5000;
const MAX_PROTOCOL_ERRORS = 20;

type Subprocess = ResultPromise<{ buffer: false; reject: false }>;

export class ProcessTransport implements Transport {
  private subprocess: Subprocess | null = null;
  private readonly queue = new AsyncQueue<InboundMessage>();
  private readonly framer: LineFramer;
  private stderrBuffer = '';
  private inputEnded = false;
  private closing = false;
  private closePromise: Promise<void> | null = null;
  private exitInfo: ExitInfo | null = null;
  private resolveExited!: (info: ExitInfo) => void;
  /** How the child ended; resolves once it has exited. */
  readonly exited: Promise<ExitInfo>;
  /** Stdout lines that were not JSON objects with a `type` (skipped), most recent last. */
  readonly protocolErrors: string[] = [];

  constructor(
    private readonly options: Options = {},
    private readonly limits: { maxLineBytes?: number; stderrTailBytes?: number } = {},
  ) {
    this.framer = new LineFramer(limits.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
  }

  get pid(): number | undefined {
    return this.subprocess?.pid;
  }

  get stderrTail(): string {
    return this.stderrBuffer;
  }

  /** The argv the CLI is started with (after the executable). */
  get args(): string[] {
    return optionsToArgs(this.options);
  }

  async start(): Promise<void> {
    if (this.subprocess || this.closing) throw new MendSdkError('transport_started', 'the transport was already started or closed');
    const { execa } = await import('execa');
    const executable = this.options.pathToExecutable ?? defaultExecutable();
    // A bad path must say so (ENOENT, EACCES), not "exited with code 1: Node.js v20…".
    await checkExecutable(executable);
    const { file, args } = commandFor(executable, this.args);
    const subprocess = execa(file, args, {
      cwd: this.options.cwd ?? process.cwd(),
      env: mergeEnv(this.options.env),
      extendEnv: false,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      forceKillAfterDelay: false,
    });
    this.subprocess = subprocess;
    subprocess.stdin.on('error', () => {
      // EPIPE after the CLI exited: write() reports it to its caller; the exit is reported by readMessages().
    });
    subprocess.stderr.on('data', (chunk: Buffer) => this.onStderr(chunk.toString('utf8')));
    const stdoutDone = new Promise<void>((resolve) => {
      subprocess.stdout.on('data', (chunk: Buffer) => this.onLines(this.framer.push(chunk)));
      subprocess.stdout.once('end', resolve);
      subprocess.stdout.once('close', resolve);
      subprocess.stdout.once('error', () => resolve());
    });
    void Promise.all([subprocess, stdoutDone]).then(([result]) => {
      this.onLines(this.framer.end());
      this.onExit(result);
    });
  }

  write(message: object | string): Promise<void> {
    const stdin = this.subprocess?.stdin;
    if (!stdin || this.inputEnded || this.exitInfo) {
      return Promise.reject(new MendSdkError('transport_closed', 'cannot write: the CLI input is closed'));
    }
    const data = typeof message === 'string' ? message : serializeLine(message);
    return new Promise((resolve, reject) => {
      stdin.write(data, (error) =>
        error ? reject(new MendSdkError('transport_closed', `cannot write to the CLI: ${error.message}`, { cause: error })) : resolve(),
      );
    });
  }

  /** Ends stdin: the CLI finishes its running turn and exits. */
  endInput(): void {
    if (this.inputEnded) return;
    this.inputEnded = true;
    this.subprocess?.stdin.end();
  }

  /** Everything the CLI prints, in order. Ends when the process has exited; throws MendProcessError on an abnormal exit. */
  readMessages(): AsyncIterable<InboundMessage> {
    return this.queue;
  }

  endedError(): MendSdkError {
    return new MendSdkError('process_exited', 'the mend CLI exited');
  }

  close(): Promise<void> {
    this.closePromise ??= this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    const subprocess = this.subprocess;
    if (!subprocess) {
      this.queue.end();
      this.resolveExited({ exitCode: null, signal: null, closedByHost: true });
      return;
    }
    if (this.exitInfo) return;
    const { stdinGraceMs = DEFAULT_STDIN_GRACE_MS, killGraceMs = DEFAULT_KILL_GRACE_MS } = this.options.shutdown ?? {};
    this.endInput();
    if (await this.exitsWithin(stdinGraceMs)) return;
    subprocess.kill('SIGTERM');
    if (await this.exitsWithin(killGraceMs)) return;
    subprocess.kill('SIGKILL');
    await this.exited;
  }

  private exitsWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([this.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() =>
      clearTimeout(timer),
    );
  }

  private onStderr(text: string): void {
    const max = this.limits.stderrTailBytes ?? STDERR_TAIL_BYTES;
    this.stderrBuffer += text;
    if (this.stderrBuffer.length > max) this.stderrBuffer = this.stderrBuffer.slice(-max);
    try {
      this.options.stderr?.(text);
    } catch {
      // A throwing stderr callback must not break the transport.
    }
  }

  private onLines(lines: FramedLine[]): void {
    for (const framed of lines) {
      if (!framed.ok && framed.code === 'line_too_long') {
        // A lost protocol line breaks the conversation's state (a result, a tool call): fail loudly.
        this.queue.fail(
          new MendSdkError(
            'line_too_long',
            `stdout line ${framed.line} is over the SDK's ${this.limits.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES}-byte cap and was dropped`,
          ),
        );
        void this.close();
        return;
      }
      if (!framed.ok) this.protocolError(`stdout line ${framed.line}: ${framed.message}`);
      else if (!isInboundMessage(framed.value)) this.protocolError(`stdout line ${framed.line}: not a JSON object with a "type"`);
      else this.queue.push(checkMessage(framed.value));
    }
  }

  private protocolError(text: string): void {
    this.protocolErrors.push(text);
    if (this.protocolErrors.length > MAX_PROTOCOL_ERRORS) this.protocolErrors.shift();
  }

  private onExit(result: { exitCode?: number; signal?: string; failed: boolean; originalMessage?: string; shortMessage?: string }): void {
    const exitCode = result.exitCode ?? null;
    const signal = result.signal ?? null;
    this.exitInfo = { exitCode, signal, closedByHost: this.closing };
    this.inputEnded = true;
    this.resolveExited(this.exitInfo);
    if (this.closing || exitCode === 0) {
      this.queue.end();
      return;
    }
    const tail = this.stderrBuffer;
    const what =
      exitCode !== null
        ? `the mend CLI exited with code ${exitCode}`
        : signal !== null
          ? `the mend CLI was killed by ${signal}`
          : `the mend CLI could not be started: ${result.originalMessage ?? result.shortMessage ?? 'unknown error'}`;
    const lastLine = meaningfulLine(tail);
    this.queue.fail(new MendProcessError(lastLine ? `${what}: ${lastLine}` : what, exitCode, signal, tail));
  }
}

/** The stderr line that says what went wrong: Node's own banner (`Node.js v20…`) and stack frames are not it. */
function meaningfulLine(tail: string): string | undefined {
  const lines = tail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^Node\.js v\d/.test(l) && !/^at /.test(l) && l !== '^');
  return lines.findLast((l) => /error|denied|not found|cannot|refus/i.test(l)) ?? lines.at(-1);
}

async function checkExecutable(path: string): Promise<void> {
  const { access, stat } = await import('node:fs/promises');
  const { constants } = await import('node:fs');
  const isScript = /\.(?:c|m)?js$/.test(path);
  try {
    const info = await stat(path);
    if (!info.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOTFILE' });
    await access(path, isScript ? constants.R_OK : constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? isScript
            ? 'not readable'
            : 'not executable'
          : code === 'ENOTFILE'
            ? 'not a file'
            : String((error as Error).message);
    throw new MendProcessError(`the mend CLI could not be started: ${path}: ${why} (${code})`, null, null, '', { cause: error }, 'spawn_failed');
  }
}
