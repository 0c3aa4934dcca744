/**
 * Helpers for end-to-end tests of the BUILT CLI (`node bin/mend.js`, run `npm run build`
 * first): a private sandbox per test (MEND_HOME and cwd from mkdtemp), spawning with
 * execa, parsing + validating stream-json output with the schemas of
 * src/wire/messages.ts, reading and writing session logs, snapshots of a directory
 * tree, and the recovery-summary comparison used by the corpus table tests (CLI and SDK).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import type { z } from 'zod';
import type { SessionRecoveryPlan } from '../../src/recovery/plan-types.js';
import type { ChatRecord, Part } from '../../src/session/records.js';
import { ChatRecordSchema } from '../../src/session/records.js';
import {
  AssistantMessageSchema,
  ResultMessageSchema,
  StreamEventMessageSchema,
  SystemErrorMessageSchema,
  SystemWarningMessageSchema,
  SystemInitMessageSchema,
  SystemRecoveryMessageSchema,
  UserMessageSchema,
  type AssistantMessage,
  type OutputMessage,
  type ResultMessage,
  type SystemInitMessage,
  type SystemRecoveryMessage,
  type UserMessage,
} from '../../src/wire/messages.js';
import { outsideTheProcess } from './outside-the-process.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(REPO_ROOT, 'bin', 'mend.js');
export const API_KEY = 'sk-test-SECRET-123';
export const MEND_RECORD_VERSION = 'mend/0.1.0';

// ---- sandbox --------------------------------------------------------------------------------

export interface Sandbox {
  root: string;
  /** MEND_HOME. Not created: mend creates it when it first writes. */
  home: string;
  /** The cwd of every run (realpath: mend derives the project folder from it). */
  cwd: string;
  /** The chats folder of the cwd's project under `home`. */
  chats: string;
  /** A scratch folder for scripts, markers and copies (outside home and cwd). */
  scratch: string;
}

const madeDirs: string[] = [];

/** Registers a temp dir for `cleanupSandboxes()`. */
export function trackTempDir(dir: string): string {
  madeDirs.push(dir);
  return dir;
}

/** Removes every sandbox (and tracked temp dir) this test file made; call it from afterAll. */
export function cleanupSandboxes(): void {
  for (const dir of madeDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function makeSandbox(label = 'cli'): Sandbox {
  const root = trackTempDir(realpathSync(mkdtempSync(join(tmpdir(), `mend-${label}-`))));
  const cwd = join(root, 'project');
  const scratch = join(root, 'scratch');
  mkdirSync(cwd);
  mkdirSync(scratch);
  const home = join(root, 'home');
  // Computed independently of src/session/session-paths.ts: Qwen's layout.
  const chats = join(home, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
  return { root, home, cwd, chats, scratch };
}

export function baseEnv(sb: Sandbox, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: sb.root,
    MEND_HOME: sb.home,
    LANG: 'C.UTF-8',
  };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export interface MendOptions {
  env?: Record<string, string | undefined>;
  /** Text fed to stdin (then closed). Without it stdin is 'ignore' unless `stdin` says otherwise. */
  input?: string;
  stdin?: 'ignore' | 'pipe';
  timeout?: number;
  cwd?: string;
}

export interface MendRun {
  exitCode: number | undefined;
  signal: string | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

/** Starts the built CLI; the caller awaits (or kills) the returned subprocess. */
export function spawnMend(sb: Sandbox, args: string[], opts: MendOptions = {}): ResultPromise<{ reject: false }> {
  outsideTheProcess('the built CLI');
  return execa('node', [BIN, ...args], {
    cwd: opts.cwd ?? sb.cwd,
    env: baseEnv(sb, opts.env),
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    ...(opts.input !== undefined ? { input: opts.input } : { stdin: opts.stdin ?? 'ignore' }),
    timeout: opts.timeout ?? 20_000,
  }) as ResultPromise<{ reject: false }>;
}

export async function finished(sub: ResultPromise<{ reject: false }>): Promise<MendRun> {
  const started = Date.now();
  const r = await sub;
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    stdout: String(r.stdout ?? ''),
    stderr: String(r.stderr ?? ''),
    timedOut: r.timedOut,
    durationMs: r.durationMs ?? Date.now() - started,
  };
}

export function mend(sb: Sandbox, args: string[], opts: MendOptions = {}): Promise<MendRun> {
  return finished(spawnMend(sb, args, opts));
}

/** Collects a running subprocess's stdout as it arrives, for waiting on a line. */
export function watchStdout(sub: ResultPromise<{ reject: false }>): {
  text: () => string;
  waitFor: (pred: (line: string) => boolean, timeoutMs?: number) => Promise<string>;
} {
  let text = '';
  sub.stdout?.on('data', (chunk: Buffer | string) => {
    text += chunk.toString();
  });
  return {
    text: () => text,
    async waitFor(pred, timeoutMs = 45_000) {
      let found: string | undefined;
      await waitFor(() => (found = text.split('\n').find((l) => l.trim() !== '' && pred(l))) !== undefined, timeoutMs, 'a stdout line');
      return found!;
    },
  };
}

export async function waitFor(check: () => boolean, timeoutMs = 45_000, what = 'a condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let ok = false;
    try {
      ok = check();
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---- stream-json output ------------------------------------------------------------------------

function schemaFor(value: unknown): z.ZodType {
  const v = value as { type?: unknown; subtype?: unknown };
  switch (v.type) {
    case 'system':
      if (v.subtype === 'init') return SystemInitMessageSchema;
      if (v.subtype === 'recovery') return SystemRecoveryMessageSchema;
      if (v.subtype === 'error') return SystemErrorMessageSchema;
      if (v.subtype === 'warning') return SystemWarningMessageSchema;
      throw new Error(`unknown system subtype ${String(v.subtype)}`);
    case 'assistant':
      return AssistantMessageSchema;
    case 'user':
      return UserMessageSchema;
    case 'stream_event':
      return StreamEventMessageSchema;
    case 'result':
      return ResultMessageSchema;
    default:
      throw new Error(`unknown message type ${String(v.type)}`);
  }
}

/**
 * Every stdout line must be one JSON protocol message that passes its schema; the last
 * byte must be a newline. Throws (failing the test) on anything else.
 */
export function parseStreamJson(stdout: string): OutputMessage[] {
  if (stdout === '') return [];
  if (!stdout.endsWith('\n')) throw new Error(`stdout does not end with a newline: ${JSON.stringify(stdout.slice(-80))}`);
  return stdout
    .slice(0, -1)
    .split('\n')
    .map((line, i) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new Error(`stdout line ${i + 1} is not JSON: ${line.slice(0, 200)}`);
      }
      const parsed = schemaFor(value).safeParse(value);
      if (!parsed.success) throw new Error(`stdout line ${i + 1} fails its schema: ${parsed.error.message}\n${line.slice(0, 500)}`);
      return parsed.data as OutputMessage;
    });
}

export interface Transcript {
  messages: OutputMessage[];
  init: SystemInitMessage;
  recovery: SystemRecoveryMessage | undefined;
  result: ResultMessage;
  assistants: AssistantMessage[];
  users: UserMessage[];
  /** `type` or `type:subtype` of each line, in order. */
  kinds: string[];
}

/**
 * Parses a stream-json run and checks the framing every run must have: `init` first,
 * exactly one `result`, and it is last; at most one `recovery` line.
 */
export function transcript(stdout: string): Transcript {
  const messages = parseStreamJson(stdout);
  const kinds = messages.map((m) => (m.type === 'system' ? `system:${(m as { subtype: string }).subtype}` : m.type));
  if (kinds[0] !== 'system:init') throw new Error(`first line is not init: ${kinds.join(', ')}`);
  const results = kinds.filter((k) => k === 'result').length;
  if (results !== 1 || kinds.at(-1) !== 'result') throw new Error(`expected exactly one result, last: ${kinds.join(', ')}`);
  const recoveries = messages.filter((m): m is SystemRecoveryMessage => kinds[messages.indexOf(m)] === 'system:recovery');
  if (recoveries.length > 1) throw new Error(`more than one recovery line: ${kinds.join(', ')}`);
  return {
    messages,
    init: messages[0] as SystemInitMessage,
    recovery: recoveries[0],
    result: messages.at(-1) as ResultMessage,
    assistants: messages.filter((m): m is AssistantMessage => m.type === 'assistant'),
    users: messages.filter((m): m is UserMessage => m.type === 'user'),
    kinds,
  };
}

/** The single line of a run that failed before `init` (or of json mode): one result object. */
export function singleResult(stdout: string): ResultMessage {
  const messages = parseStreamJson(stdout);
  if (messages.length !== 1 || messages[0]!.type !== 'result') {
    throw new Error(`expected exactly one result line, got: ${stdout.slice(0, 500)}`);
  }
  return messages[0] as ResultMessage;
}

// ---- scripted provider --------------------------------------------------------------------------

export interface ScriptedResponseInput {
  text?: string;
  thought?: string;
  toolCalls?: Array<{ id: string; name: string; args?: Record<string, unknown> }>;
  stallMs?: number | 'forever';
  chunkSize?: number;
  delayMs?: number;
}

let scriptCounter = 0;
export function writeScript(sb: Sandbox, script: ScriptedResponseInput[]): string {
  const path = join(sb.scratch, `script-${++scriptCounter}.json`);
  writeFileSync(path, JSON.stringify(script));
  return path;
}

// ---- tools that a test makes mend run -----------------------------------------------------------

/** A shell command that appends its bash pid (the leader of its process group) to `marker`, then sleeps. */
export function slowCommand(marker: string): string {
  return `echo $$ >> '${marker}'; sleep 30`;
}

export function markerLines(marker: string): string[] {
  return existsSync(marker) ? readFileSync(marker, 'utf8').split('\n').filter(Boolean) : [];
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The sleeping shell is ours (we made the CLI start it): end its process group by id. */
export function killMarkedGroups(marker: string): void {
  for (const line of markerLines(marker)) {
    const pgid = Number(line);
    if (Number.isInteger(pgid) && pgid > 1) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

// ---- session logs -------------------------------------------------------------------------------

export function sessionFiles(sb: Sandbox): string[] {
  if (!existsSync(sb.chats)) return [];
  return readdirSync(sb.chats)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()
    .map((n) => join(sb.chats, n));
}

export function logPathOf(sb: Sandbox, sessionId: string): string {
  return join(sb.chats, `${sessionId}.jsonl`);
}

/** Reads a log mend wrote: every line must be a complete, valid record. */
export function readLog(path: string): ChatRecord[] {
  const text = readFileSync(path, 'utf8');
  if (text === '') return [];
  if (!text.endsWith('\n')) throw new Error(`${path} does not end with a newline`);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => ChatRecordSchema.parse(JSON.parse(line)));
}

export function writeLog(path: string, records: ReadonlyArray<Record<string, unknown>>): void {
  mkdirSync(resolve(path, '..'), { recursive: true });
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

/**
 * Builds a chained session log in the on-disk format (records written "by mend" unless
 * `version` says otherwise). Timestamps start at `start` and grow by one second.
 */
export class LogBuilder {
  readonly records: Array<Record<string, unknown>> = [];
  private n = 0;
  private leaf: string | null = null;

  constructor(
    readonly sessionId: string,
    private readonly opts: { start?: string; cwd?: string; version?: string } = {},
  ) {}

  private base(type: string, prefix: string): Record<string, unknown> {
    const uuid = `${prefix}${++this.n}`;
    const start = Date.parse(this.opts.start ?? '2026-01-01T10:00:00.000Z');
    const rec = {
      uuid,
      parentUuid: this.leaf,
      sessionId: this.sessionId,
      timestamp: new Date(start + this.n * 1000).toISOString(),
      type,
      provenance: type === 'user' ? 'real_user' : type === 'assistant' ? 'assistant_output' : type,
      cwd: this.opts.cwd ?? '/tmp/project',
      version: this.opts.version ?? MEND_RECORD_VERSION,
    };
    this.leaf = uuid;
    return rec;
  }

  user(text: string): this {
    this.records.push({ ...this.base('user', 'u'), message: { role: 'user', parts: [{ text }] } });
    return this;
  }

  assistant(parts: Part[]): this {
    this.records.push({ ...this.base('assistant', 'a'), model: 'test-model', message: { role: 'model', parts } });
    return this;
  }

  toolResult(id: string, name: string, output: string): this {
    this.records.push({
      ...this.base('tool_result', 'r'),
      message: { role: 'user', parts: [{ functionResponse: { id, name, response: { output } } }] },
      toolCallResult: { callId: id, status: 'success' },
    });
    return this;
  }

  system(subtype: string, systemPayload: unknown): this {
    this.records.push({ ...this.base('system', 's'), subtype, systemPayload });
    return this;
  }

  write(path: string): string {
    writeLog(path, this.records);
    return path;
  }
}

// ---- file-system snapshots ----------------------------------------------------------------------

/**
 * Every file and folder under `dir` (relative path -> sha256 of the bytes, or 'dir'); {} when
 * it does not exist. A mend home's plan-checkpoint cache (`cache/` holding only
 * `checkpoints/*.ckpt`) is left out: any read may fill it, and it is never a session's file.
 */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const rel = relative(dir, p);
      if (name === 'cache' && isCheckpointCache(p)) continue;
      if (statSync(p).isDirectory()) {
        out[`${rel}/`] = 'dir';
        walk(p);
      } else {
        out[rel] = createHash('sha256').update(readFileSync(p)).digest('hex');
      }
    }
  };
  walk(dir);
  return out;
}

/** A mend home's `cache/` folder that holds nothing but plan checkpoints. */
function isCheckpointCache(path: string): boolean {
  if (!statSync(path).isDirectory()) return false;
  const names = readdirSync(path);
  if (names.length !== 1 || names[0] !== 'checkpoints') return false;
  return readdirSync(join(path, 'checkpoints')).every((n) => /^[0-9a-f]{40}\.ckpt$/.test(n));
}

export function lockFilesUnder(dir: string): string[] {
  return Object.keys(snapshotTree(dir)).filter((p) => p.endsWith('.lock'));
}

// ---- recovery summaries (shared by the CLI and SDK corpus tables) -------------------------------

/** The fields of a recovery summary that every entrypoint must agree on with the core plan. */
export interface ComparableSummary {
  plan_id: string;
  kind: string;
  cause: string;
  can_continue: boolean;
  can_auto_continue: boolean;
  requires_user_confirmation: boolean;
  previous_attempts: number;
  /** Repair type -> count, in first-seen order. */
  repairs: Array<{ type: string; count: number }>;
  continuation_mode: string | null;
  part_count: number | null;
}

/** Counted here, not with the product's helper, so a bug there cannot hide itself. */
function countByType(repairs: ReadonlyArray<{ type: string }>): Array<{ type: string; count: number }> {
  const out: Array<{ type: string; count: number }> = [];
  for (const r of repairs) {
    const e = out.find((x) => x.type === r.type);
    if (e) e.count += 1;
    else out.push({ type: r.type, count: 1 });
  }
  return out;
}

/** From a plan computed in-process (loadSession + buildSessionRecoveryPlan). */
export function summaryFromCorePlan(plan: SessionRecoveryPlan): ComparableSummary {
  return {
    plan_id: plan.planId,
    kind: plan.kind,
    cause: plan.cause,
    can_continue: plan.canContinue,
    can_auto_continue: plan.canAutoContinue,
    requires_user_confirmation: plan.requiresUserConfirmation,
    previous_attempts: plan.previousAttempts,
    repairs: countByType(plan.repairs),
    continuation_mode: plan.continuation?.mode ?? null,
    part_count: plan.continuation ? plan.continuation.parts.length : null,
  };
}

/** From a `recovery` line (CLI stream-json), an `initialize` response or `get_recovery_plan` (SDK). */
export function summaryFromRecoveryLine(line: {
  plan_id: string;
  kind: string;
  cause: string;
  can_continue: boolean;
  can_auto_continue: boolean;
  requires_user_confirmation: boolean;
  previous_attempts: number;
  repairs: Array<{ type: string; count: number }>;
  continuation: { mode: string; part_count: number } | null;
}): ComparableSummary {
  return {
    plan_id: line.plan_id,
    kind: line.kind,
    cause: line.cause,
    can_continue: line.can_continue,
    can_auto_continue: line.can_auto_continue,
    requires_user_confirmation: line.requires_user_confirmation,
    previous_attempts: line.previous_attempts,
    repairs: line.repairs.map((r) => ({ type: r.type, count: r.count })),
    continuation_mode: line.continuation?.mode ?? null,
    part_count: line.continuation ? line.continuation.part_count : null,
  };
}

/** From a camelCase summary (ACP `_meta.mend.recovery`, `_mend/session/recovery`, the daemon's answers). */
export function summaryFromCamel(s: {
  planId: string;
  recoveryKind: string;
  cause: string;
  canContinue: boolean;
  canAutoContinue: boolean;
  requiresUserConfirmation: boolean;
  previousAttempts: number;
  repairs: Array<{ type: string; count: number }>;
  continuation: { mode: string; partCount: number } | null;
}): ComparableSummary {
  return summaryFromRecoveryLine({
    plan_id: s.planId,
    kind: s.recoveryKind,
    cause: s.cause,
    can_continue: s.canContinue,
    can_auto_continue: s.canAutoContinue,
    requires_user_confirmation: s.requiresUserConfirmation,
    previous_attempts: s.previousAttempts,
    repairs: s.repairs,
    continuation: s.continuation ? { mode: s.continuation.mode, part_count: s.continuation.partCount } : null,
  });
}
