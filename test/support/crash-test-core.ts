/**
 * The crash test's engine: real runs of the built CLI (`node bin/mend.js`) with the
 * scripted model, killed at every write point (MEND_FAULT=kill-after-write / torn-write)
 * and at random moments (SIGKILL from outside while a tool or the model stream is in
 * flight), each followed by these checks:
 *
 *   (1) every byte that was in the log before the run is still there (no complete record
 *       is lost or changed, and nothing is rewritten);
 *   (2) the log loads and plans without error and the plan's apiHistory passes
 *       validateProviderHistory;
 *   (3) the plan's kind is the one the kill point implies (KIND_TABLE in
 *       crash-test-model.ts, computed from the model's prediction of what the run had
 *       appended, never from the plan), and the appended records are what the model
 *       predicts for the run (a prefix of it when the run was killed);
 *   (4) the run that follows the last kill (`--continue-interrupted`, or `-p` on a clean
 *       session) exits 0 with one `result` line and leaves a clean plan;
 *   (5) no tool call ran twice, and none ran before its call was on disk: every shell
 *       command greps the log for its own call before appending "start <id>" to a marker
 *       file, so a command that finds its call missing marks itself NOT_ON_DISK.
 *
 * scripts/crash-test.ts is the command line; test/reliability/crash-sample.e2e.test.ts runs a
 * sample through runCrashTest().
 */
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadSession } from '../../src/session/session-loader.js';
import { buildSessionRecoveryPlan } from '../../src/recovery/build-plan.js';
import { validateProviderHistory } from '../../src/recovery/validate-history.js';
import {
  FOLLOW_UP_PROMPT,
  FOLLOW_UP_RESPONSES,
  PROMPT,
  SCENARIO,
  callById,
  describeFault,
  describeSchedule,
  expectedKind,
  faultEnv,
  keyOf,
  nextRun,
  extraRandomSchedules,
  planSchedules,
  resolveIndex,
  responseAt,
  tailState,
  type AbstractRecord,
  type Fault,
  type Kind,
  type PredictedRun,
  type Schedule,
} from './crash-test-model.js';

export { planSchedules, describeSchedule, KIND_TABLE } from './crash-test-model.js';
export type { Schedule, Fault, AbstractRecord, Kind } from './crash-test-model.js';
export { SCENARIO, PROMPT, keyOf, nextRun, expectedKind, tailState } from './crash-test-model.js';

// ---- options and report ---------------------------------------------------------------------------

export interface CrashTestOptions {
  /** Kill points wanted (default 150). */
  points?: number;
  /** Every systematic point plus random ones: at least 1000 points. */
  full?: boolean;
  seed?: number;
  /** Schedules run in parallel (default: twice the cores, at least 2). */
  jobs?: number;
  /** Progress and violation lines. */
  log?: (line: string) => void;
  /** Keep every sandbox (default: only those of schedules with a violation). */
  keepAll?: boolean;
  /** Run exactly these schedules instead of planning them. */
  schedules?: Schedule[];
  /** Per-run timeout (default 60 s). */
  runTimeoutMs?: number;
}

export interface Violation {
  schedule: number;
  faults: string;
  /** 0-based run index within the schedule. */
  run: number;
  check: string;
  message: string;
  sandbox: string;
}

export interface CrashTestReport {
  seed: number;
  /** Kill points tried: runs that were actually killed and checked. */
  points: number;
  schedules: number;
  /** Runs checked in total (killed ones plus the completing ones). */
  runs: number;
  /** Faults that did not fire because the run ended first (not counted as points). */
  notFired: number;
  byFault: Record<string, number>;
  /** Expected kind after each kill point. */
  byKind: Record<string, number>;
  violations: Violation[];
  durationMs: number;
  jobs: number;
}

export function summaryLine(report: CrashTestReport): string {
  return `crash-test: ${report.points} points, ${report.violations.length} violations`;
}

// ---- paths ----------------------------------------------------------------------------------------

/** The repository root: the closest folder above this file with bin/mend.js (works from test/support/ and dist/test/support/). */
export function repoRoot(): string {
  let dir = import.meta.dirname;
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'bin', 'mend.js')) && existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  throw new Error(`cannot find the repository root above ${import.meta.dirname}`);
}

/** Newest modification time (ms) of any file under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * Copies the built CLI (bin/, dist/src/, package.json; node_modules linked) into `base`
 * and returns its bin/mend.js. Every run of one crash test then uses the same build,
 * even when someone rebuilds dist/ meanwhile (a process started mid-build would load a
 * half-written dist/ and fail for reasons that have nothing to do with crashes).
 */
async function snapshotCli(root: string, base: string): Promise<string> {
  const dir = join(base, 'cli');
  const dist = join(root, 'dist', 'src');
  for (let attempt = 0; ; attempt++) {
    const stamp = newestMtime(dist);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'dist'), { recursive: true });
    cpSync(dist, join(dir, 'dist', 'src'), { recursive: true });
    cpSync(join(root, 'bin'), join(dir, 'bin'), { recursive: true });
    copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    // Unchanged while copying, and not written in the last two seconds: no build in progress.
    if (newestMtime(dist) === stamp && Date.now() - stamp > 2_000) return join(dir, 'bin', 'mend.js');
    if (attempt >= 30) throw new Error(`crash-test: ${dist} keeps changing (a build in progress?)`);
    await sleep(2_000);
  }
}

// ---- per-schedule sandbox -------------------------------------------------------------------------

export interface ScenarioSandbox {
  root: string;
  home: string;
  cwd: string;
  out: string;
  marker: string;
  script: string;
  sessionId: string;
  logPath: string;
}

function shellCommand(id: string, sleep: number, logPath: string, marker: string): string {
  const needle = `"functionCall":{"id":"${id}"`;
  return (
    `if grep -qF '${needle}' '${logPath}' 2>/dev/null; then echo 'start ${id}' >> '${marker}'; ` +
    `else echo 'start ${id} NOT_ON_DISK' >> '${marker}'; fi; sleep ${sleep}; echo 'end ${id}' >> '${marker}'; echo '${id} finished'`
  );
}

/** A sandbox (MEND_HOME, project folder, marker file, model script) for one schedule under `base`. */
export function createScenarioSandbox(base: string, id: number): ScenarioSandbox {
  const root = join(base, `s${id}`);
  const home = join(root, 'home');
  const cwd = join(root, 'project');
  const out = join(cwd, 'out');
  mkdirSync(out, { recursive: true });
  const sessionId = randomUUID();
  const chats = join(home, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'), 'chats');
  const logPath = join(chats, `${sessionId}.jsonl`);
  const marker = join(root, 'marker.txt');
  const script = join(root, 'script.json');
  const responses = [];
  for (let r = 0; r < SCENARIO.length + FOLLOW_UP_RESPONSES; r++) {
    const resp = responseAt(r);
    responses.push({
      ...(resp.thought ? { thought: resp.thought } : {}),
      text: resp.text,
      chunkSize: resp.chunkSize,
      delayMs: resp.delayMs,
      toolCalls: resp.calls.map((c) =>
        c.name === 'run_shell_command'
          ? { id: c.id, name: c.name, args: { command: shellCommand(c.id, c.sleep ?? 0.05, logPath, marker), description: `check ${c.id}` } }
          : { id: c.id, name: c.name, args: { file_path: join(out, `${c.id}.txt`), content: `written by ${c.id}\n` } },
      ),
    });
  }
  writeFileSync(script, JSON.stringify(responses));
  return { root, home, cwd, out, marker, script, sessionId, logPath };
}

// ---- reading the log ------------------------------------------------------------------------------

export interface ParsedLog {
  exists: boolean;
  bytes: Buffer;
  records: AbstractRecord[];
  raw: Array<Record<string, unknown>>;
  /** Complete lines that do not parse (terminated torn tails). */
  malformed: number;
  /** Bytes after the last newline. */
  tail: Buffer;
  /** The tail parses as one whole record (only its newline is missing). */
  tailIsRecord: boolean;
}

function abstractOf(value: Record<string, unknown>): AbstractRecord {
  const type = value['type'];
  const message = value['message'] as { parts?: Array<Record<string, unknown>> } | undefined;
  const parts = Array.isArray(message?.parts) ? message.parts : [];
  if (type === 'user') return { t: 'user' };
  if (type === 'assistant') {
    const text = parts.find((p) => typeof p['text'] === 'string' && p['thought'] !== true)?.['text'];
    const m = typeof text === 'string' ? /^\[r(\d+)\]/.exec(text) : null;
    const calls = parts.map((p) => (p['functionCall'] as { id?: string } | undefined)?.id).filter((id): id is string => typeof id === 'string');
    return { t: 'assistant', r: m ? Number(m[1]) : -1, calls };
  }
  if (type === 'tool_result') {
    const id = (parts[0]?.['functionResponse'] as { id?: string } | undefined)?.id ?? '?';
    const recovery = value['recovery'] as { synthetic?: unknown } | undefined;
    return { t: 'result', id, synthetic: recovery?.synthetic === true };
  }
  if (type === 'system' && value['subtype'] === 'recovery') return { t: 'recovery' };
  return { t: 'other', what: `${String(type)}:${String(value['subtype'] ?? '')}` };
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Reads a log the way the crash test judges it: complete lines, malformed lines, and the bytes after the last newline. */
export function readCrashLog(path: string): ParsedLog {
  if (!existsSync(path)) return { exists: false, bytes: Buffer.alloc(0), records: [], raw: [], malformed: 0, tail: Buffer.alloc(0), tailIsRecord: false };
  const bytes = readFileSync(path);
  const lastNl = bytes.lastIndexOf(0x0a);
  const complete = bytes.subarray(0, lastNl + 1).toString('utf8');
  const tail = bytes.subarray(lastNl + 1);
  const raw: Array<Record<string, unknown>> = [];
  let malformed = 0;
  for (const line of complete.split('\n').slice(0, -1)) {
    if (line.trim() === '') continue;
    const v = parseJsonObject(line);
    if (v) raw.push(v);
    else malformed += 1;
  }
  let tailIsRecord = false;
  if (tail.length > 0) {
    const v = parseJsonObject(tail.toString('utf8'));
    if (v) {
      raw.push(v);
      tailIsRecord = true;
    }
  }
  return { exists: true, bytes, records: raw.map(abstractOf), raw, malformed, tail, tailIsRecord };
}

// ---- markers --------------------------------------------------------------------------------------

export interface Markers {
  starts: Map<string, number>;
  ends: Map<string, number>;
  notOnDisk: string[];
}

export function readMarkers(path: string): Markers {
  const m: Markers = { starts: new Map(), ends: new Map(), notOnDisk: [] };
  if (!existsSync(path)) return m;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [what, id, flag] = line.trim().split(' ');
    if (!id) continue;
    if (what === 'start') {
      m.starts.set(id, (m.starts.get(id) ?? 0) + 1);
      if (flag === 'NOT_ON_DISK') m.notOnDisk.push(id);
    } else if (what === 'end') m.ends.set(id, (m.ends.get(id) ?? 0) + 1);
  }
  return m;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Orphaned commands of a killed run keep going (own process group); wait until every started one has ended. */
async function waitForOrphans(marker: string, graceMs: number, timeoutMs = 10_000): Promise<string[]> {
  if (graceMs > 0) await sleep(graceMs);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = readMarkers(marker);
    const open = [...m.starts.keys()].filter((id) => (m.ends.get(id) ?? 0) < (m.starts.get(id) ?? 0));
    if (open.length === 0 || Date.now() > deadline) return open;
    await sleep(20);
  }
}

// ---- running mend ---------------------------------------------------------------------------------

interface RunOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** We sent SIGKILL (an external fault) before the process ended. */
  killedByUs: boolean;
  timedOut: boolean;
  durationMs: number;
}

interface RunSpec {
  bin: string;
  sb: ScenarioSandbox;
  mode: PredictedRun['mode'];
  mendFault: string | undefined;
  /** External kill: resolves when it is time to kill; null = no external kill. */
  external: ((child: { stdout: () => string }) => Promise<void>) | null;
  timeoutMs: number;
}

/** The CLI arguments of a run of the scenario. */
export function scenarioArgs(sb: ScenarioSandbox, mode: PredictedRun['mode']): string[] {
  const common = ['--scripted-responses', sb.script, '--approval-mode', 'yolo', '-o', 'stream-json', '--include-partial-messages'];
  if (mode === 'new') return ['--session-id', sb.sessionId, '-p', PROMPT, ...common];
  if (mode === 'continue') return ['--resume', sb.logPath, '--continue-interrupted', ...common];
  return ['--resume', sb.logPath, '-p', FOLLOW_UP_PROMPT, ...common];
}

/** A minimal environment: PATH, HOME and MEND_HOME in the sandbox, nothing else. */
export function scenarioEnv(sb: ScenarioSandbox): Record<string, string> {
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: sb.root, MEND_HOME: sb.home, LANG: 'C.UTF-8' };
}

function runMend(spec: RunSpec): Promise<RunOutcome> {
  const started = Date.now();
  const env = scenarioEnv(spec.sb);
  if (spec.mendFault) env['MEND_FAULT'] = spec.mendFault;
  const child = spawn(process.execPath, [spec.bin, ...scenarioArgs(spec.sb, spec.mode)], {
    cwd: spec.sb.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  let exited = false;
  let killedByUs = false;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, spec.timeoutMs);
  if (spec.external) {
    void spec.external({ stdout: () => stdout }).then(() => {
      if (!exited && child.exitCode === null && child.signalCode === null) {
        killedByUs = child.kill('SIGKILL');
      }
    });
  }
  return new Promise((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      exited = true;
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, killedByUs: killedByUs && signal === 'SIGKILL', timedOut, durationMs: Date.now() - started });
    });
  });
}

/** Waits for the trigger of an external kill; gives up (never resolves in time) when the run ends first. */
function externalTrigger(
  fault: Extract<Fault, { kind: 'external' }>,
  sb: ScenarioSandbox,
  run: PredictedRun,
  estimateMs: number,
): (child: { stdout: () => string }) => Promise<void> {
  const t = fault.trigger;
  return async (child) => {
    const deadline = Date.now() + 60_000;
    if (t.on === 'time') {
      await sleep(80 + t.u * estimateMs);
      return;
    }
    if (t.on === 'stream') {
      const k = 1 + Math.min(run.modelRequests - 1, Math.floor(t.u * run.modelRequests));
      while (Date.now() < deadline && (child.stdout().match(/"type":"message_start"/g)?.length ?? 0) < k) await sleep(3);
      await sleep(t.delayU * 160);
      return;
    }
    const shells = run.records.filter(
      (r): r is Extract<AbstractRecord, { t: 'result' }> => r.t === 'result' && !r.synthetic && callById(r.id)?.name === 'run_shell_command',
    );
    const target = shells[Math.min(shells.length - 1, Math.floor(t.u * shells.length))];
    if (!target) {
      await sleep(80 + t.u * estimateMs);
      return;
    }
    const call = callById(target.id);
    while (Date.now() < deadline && (readMarkers(sb.marker).starts.get(target.id) ?? 0) === 0) await sleep(3);
    await sleep(t.delayU * ((call?.sleep ?? 0.05) * 1000 + 40));
  };
}

// ---- one schedule ---------------------------------------------------------------------------------

interface ScheduleResult {
  points: number;
  runs: number;
  notFired: number;
  byFault: Record<string, number>;
  byKind: Record<string, number>;
  violations: Violation[];
  sandbox: string;
}

interface Env {
  bin: string;
  base: string;
  timeoutMs: number;
  /** ms per record of a fault-free run (for time triggers). */
  msPerRecord: number;
}

async function checkPlan(sb: ScenarioSandbox, expected: Kind, tornSoFar: number, flag: (check: string, message: string) => void): Promise<void> {
  let plan;
  try {
    const loaded = await loadSession(sb.logPath);
    plan = buildSessionRecoveryPlan({
      sessionId: loaded.conversation.sessionId || sb.sessionId,
      conversation: loaded.conversation,
      historyGaps: loaded.historyGaps,
      diagnostics: loaded.diagnostics,
    });
    const bad = loaded.diagnostics.filter((d) => d.code !== 'malformed_line' && d.code !== 'torn_tail');
    const damaged = loaded.diagnostics.filter((d) => d.code === 'malformed_line' || d.code === 'torn_tail').length;
    if (bad.length > 0) flag('(2) load', `unexpected diagnostics: ${JSON.stringify(bad)}`);
    if (damaged > tornSoFar) flag('(1) log', `${damaged} damaged line(s) but only ${tornSoFar} torn write(s) were injected`);
    if (loaded.historyGaps.length > 0) flag('(2) load', `history gaps: ${JSON.stringify(loaded.historyGaps)}`);
  } catch (error) {
    flag('(2) load', `loading/planning threw: ${(error as Error).stack ?? String(error)}`);
    return;
  }
  const check = validateProviderHistory(plan.apiHistory);
  if (!check.ok) flag('(2) apiHistory', `validateProviderHistory: ${check.problems.join('; ')}`);
  if (plan.kind !== expected) flag('(3) kind', `plan kind ${plan.kind}, the kill point implies ${expected}`);
  const cause = expected === 'clean' ? 'none' : 'crash';
  if (plan.kind === expected && plan.cause !== cause) flag('(3) kind', `plan cause ${plan.cause}, expected ${cause}`);
}

function checkMarkers(sb: ScenarioSandbox, log: ParsedLog, flag: (check: string, message: string) => void, final: boolean): void {
  const m = readMarkers(sb.marker);
  for (const id of m.notOnDisk) flag('(5) tools', `${id} ran before its call was in the log`);
  const onDisk = new Set(log.records.flatMap((r) => (r.t === 'assistant' ? r.calls : [])));
  for (const [id, n] of m.starts) {
    if (n > 1) flag('(5) tools', `${id} executed ${n} times`);
    if (!onDisk.has(id)) flag('(5) tools', `${id} executed but no assistant record in the log holds its call`);
  }
  const realResults = new Set(log.records.flatMap((r) => (r.t === 'result' && !r.synthetic ? [r.id] : [])));
  for (const id of realResults) {
    const call = callById(id);
    if (call?.name === 'run_shell_command') {
      if ((m.starts.get(id) ?? 0) !== 1 || (m.ends.get(id) ?? 0) !== 1) {
        flag('(5) tools', `${id} has a recorded result but ran ${m.starts.get(id) ?? 0} time(s) (ended ${m.ends.get(id) ?? 0})`);
      }
    }
  }
  for (const call of SCENARIO.flatMap((r) => r.calls).filter((c) => c.name === 'write_file')) {
    const written = existsSync(join(sb.out, `${call.id}.txt`));
    if (written && !onDisk.has(call.id)) flag('(5) tools', `${call.id} wrote its file but its call is not in the log`);
    if (realResults.has(call.id) && !written) flag('(5) tools', `${call.id} has a recorded result but its file is missing`);
  }
  if (final) {
    const open = [...m.starts.keys()].filter((id) => (m.ends.get(id) ?? 0) === 0);
    if (open.length > 0) flag('(5) tools', `commands never finished: ${open.join(', ')}`);
  }
}

function checkStreamJson(stdout: string, expectRecovery: Kind | null, flag: (check: string, message: string) => void): void {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  const msgs = lines.map((l) => parseJsonObject(l));
  if (msgs.some((m) => m === null)) {
    flag('(4) output', 'a stdout line is not JSON');
    return;
  }
  const types = msgs.map((m) => (m!['type'] === 'system' ? `system:${String(m!['subtype'])}` : String(m!['type'])));
  if (types[0] !== 'system:init') flag('(4) output', `first line is ${types[0]}, not init`);
  const results = types.filter((t) => t === 'result').length;
  if (results !== 1 || types.at(-1) !== 'result') flag('(4) output', `expected exactly one result line, last; got ${results}`);
  const result = msgs.at(-1)!;
  if (result['is_error'] !== false) flag('(4) output', `result is an error: ${JSON.stringify(result['error'])}`);
  const recovery = msgs.find((m) => m!['type'] === 'system' && m!['subtype'] === 'recovery');
  if (expectRecovery !== null) {
    if (!recovery) flag('(4) output', 'no recovery line on a resumed run');
    else if (recovery['kind'] !== expectRecovery) flag('(3) kind', `the CLI's recovery line says ${String(recovery['kind'])}, expected ${expectRecovery}`);
  }
}

async function runSchedule(schedule: Schedule, env: Env): Promise<ScheduleResult> {
  const sb = createScenarioSandbox(env.base, schedule.id);
  const res: ScheduleResult = { points: 0, runs: 0, notFired: 0, byFault: {}, byKind: {}, violations: [], sandbox: sb.root };
  const faults = describeSchedule(schedule);
  let runIndex = 0;
  const seen = new Set<string>();
  const flag = (check: string, message: string) => {
    // Marker checks are cumulative: report a finding once, at the run where it first shows.
    if (seen.has(`${check}|${message}`)) return;
    seen.add(`${check}|${message}`);
    res.violations.push({ schedule: schedule.id, faults, run: runIndex, check, message, sandbox: sb.root });
  };

  let torn = 0;
  for (let step = 0; step <= schedule.faults.length; step++) {
    runIndex = step;
    const fault: Fault | undefined = schedule.faults[step];
    const before = readCrashLog(sb.logPath);
    const predicted = nextRun(before.exists, before.records);
    const expectRecoveryLine = before.exists ? expectedKind(tailState(before.records)).kind : null;
    let mendFault: string | undefined;
    let resolvedN = 0;
    if (fault && fault.kind !== 'external') {
      resolvedN = resolveIndex(fault.n, predicted.records.length);
      mendFault = faultEnv(fault, resolvedN);
    }
    const estimate = env.msPerRecord * predicted.records.length;
    const outcome = await runMend({
      bin: env.bin,
      sb,
      mode: predicted.mode,
      mendFault,
      external: fault?.kind === 'external' ? externalTrigger(fault, sb, predicted, estimate) : null,
      timeoutMs: env.timeoutMs,
    });
    res.runs += 1;
    if (outcome.timedOut) {
      flag('(4) hang', `run did not finish within ${env.timeoutMs} ms (mode ${predicted.mode}); stderr: ${outcome.stderr.slice(-500)}`);
      return res;
    }
    const killed = fault !== undefined && outcome.signal === 'SIGKILL' && (fault.kind !== 'external' || outcome.killedByUs);
    const open = await waitForOrphans(sb.marker, fault?.kind === 'external' ? 250 : 0);
    if (open.length > 0) flag('(5) tools', `orphaned commands did not finish: ${open.join(', ')}`);
    const after = readCrashLog(sb.logPath);

    // (1) nothing that was there before is lost or changed.
    if (!after.bytes.subarray(0, before.bytes.length).equals(before.bytes)) {
      const completeBefore = before.bytes.subarray(0, before.bytes.lastIndexOf(0x0a) + 1);
      const lost = !after.bytes.subarray(0, completeBefore.length).equals(completeBefore);
      flag('(1) log', lost ? 'a record that was complete before the run was lost or changed' : 'torn bytes of an earlier run were rewritten');
    }
    const appended = after.records.slice(before.records.length);
    const appendedKeys = appended.map(keyOf);
    const predictedKeys = predicted.records.map(keyOf);
    if (after.malformed + (after.tail.length > 0 && !after.tailIsRecord ? 1 : 0) > torn + (fault?.kind === 'torn-write' && killed ? 1 : 0)) {
      flag('(1) log', `${after.malformed} malformed line(s) and a ${after.tail.length}-byte tail after ${torn} torn write(s)`);
    }

    if (fault && !killed) {
      if (outcome.signal !== null || outcome.code !== 0) {
        flag(
          '(4) run',
          `run with fault ${describeFault(fault)} ended with code ${outcome.code} signal ${outcome.signal}; stderr: ${outcome.stderr.slice(-800)}`,
        );
        return res;
      }
      // The run finished before the fault fired: it is the completing run.
      res.notFired += 1;
    }

    if (fault && killed) {
      res.points += 1;
      const fk = fault.kind;
      res.byFault[fk] = (res.byFault[fk] ?? 0) + 1;
      // How many of the run's predicted records the kill point leaves durable.
      let k: number;
      if (fault.kind === 'kill-after-write') k = resolvedN;
      else if (fault.kind === 'torn-write') {
        torn += after.tail.length > 0 && !after.tailIsRecord ? 1 : 0;
        k = after.tailIsRecord && after.tail.length > 0 ? resolvedN : resolvedN - 1;
        if (!after.tailIsRecord && fault.bytes > 0 && after.tail.length !== fault.bytes) {
          flag('(1) log', `torn-write of ${fault.bytes} bytes left a ${after.tail.length}-byte tail`);
        }
      } else k = appended.length;
      const expectedKeys = predictedKeys.slice(0, k);
      if (JSON.stringify(appendedKeys) !== JSON.stringify(expectedKeys)) {
        flag(
          '(3) records',
          `appended [${appendedKeys.join(', ')}], the kill point implies [${expectedKeys.join(', ')}] (run predicted: [${predictedKeys.join(', ')}])`,
        );
      }
      const durable = [...before.records, ...predicted.records.slice(0, k)];
      const { kind } = expectedKind(tailState(durable));
      res.byKind[kind] = (res.byKind[kind] ?? 0) + 1;
      if (after.exists) await checkPlan(sb, kind, torn, flag);
      else if (k > 0) flag('(1) log', 'the log file is missing after records were written');
      checkMarkers(sb, after, flag, false);
      continue;
    }

    // The completing run.
    if (outcome.code !== 0 || outcome.signal !== null) {
      flag(
        '(4) continue',
        `${predicted.mode} run exited ${outcome.code} (signal ${outcome.signal}); stdout tail: ${outcome.stdout.slice(-600)} stderr: ${outcome.stderr.slice(-600)}`,
      );
      return res;
    }
    checkStreamJson(outcome.stdout, expectRecoveryLine, flag);
    if (JSON.stringify(appendedKeys) !== JSON.stringify(predictedKeys)) {
      flag('(4) records', `${predicted.mode} run appended [${appendedKeys.join(', ')}], expected [${predictedKeys.join(', ')}]`);
    }
    await checkPlan(sb, 'clean', torn, flag);
    checkMarkers(sb, after, flag, true);
    const chats = dirname(sb.logPath);
    const locks = existsSync(chats) ? readdirSync(chats).filter((n) => n.endsWith('.lock')) : [];
    if (locks.length > 0) flag('(4) lock', `lock file left after a completed run: ${locks.join(', ')}`);
    break;
  }
  return res;
}

// ---- the whole test -------------------------------------------------------------------------------

async function pool<T, R>(items: T[], jobs: number, fn: (item: T) => Promise<R>, onDone: (r: R, item: T) => void): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      const item = items[i]!;
      onDone(await fn(item), item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
}

/** A fault-free run of the scenario: the harness checks itself and measures the pace of a run. */
async function calibrate(env: Env): Promise<void> {
  const sb = createScenarioSandbox(env.base, 0);
  const predicted = nextRun(false, []);
  const outcome = await runMend({ bin: env.bin, sb, mode: 'new', mendFault: undefined, external: null, timeoutMs: env.timeoutMs });
  const log = readCrashLog(sb.logPath);
  const keys = log.records.map(keyOf);
  if (outcome.code !== 0 || JSON.stringify(keys) !== JSON.stringify(predicted.records.map(keyOf))) {
    throw new Error(
      `crash-test: the fault-free reference run does not match the model (exit ${outcome.code}, records [${keys.join(', ')}]); ` +
        `is the CLI built (npm run build)? stderr: ${outcome.stderr.slice(-800)}`,
    );
  }
  env.msPerRecord = Math.max(20, outcome.durationMs / predicted.records.length);
  rmSync(sb.root, { recursive: true, force: true });
}

export async function runCrashTest(options: CrashTestOptions = {}): Promise<CrashTestReport> {
  const started = Date.now();
  const seed = options.seed ?? 1;
  const jobs = Math.max(1, options.jobs ?? Math.max(2, 2 * availableParallelism()));
  const log = options.log ?? (() => {});
  const root = repoRoot();
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js'))) throw new Error('crash-test: dist/ is missing; run npm run build first');
  const base = realpathSync(mkdtempSync(join(tmpdir(), `mend-crash-${seed}-`)));
  const bin = await snapshotCli(root, base);
  const env: Env = { bin, base, timeoutMs: options.runTimeoutMs ?? 60_000, msPerRecord: 100 };
  await calibrate(env);

  const schedules = options.schedules ?? planSchedules({ points: options.points ?? 150, full: options.full === true, seed });
  const report: CrashTestReport = {
    seed,
    points: 0,
    schedules: schedules.length,
    runs: 0,
    notFired: 0,
    byFault: {},
    byKind: {},
    violations: [],
    durationMs: 0,
    jobs,
  };
  const target = options.schedules ? 0 : options.full ? Math.max(options.points ?? 0, 1000) : (options.points ?? 150);
  let done = 0;
  let total = schedules.length;
  let lastPct = -1;
  const runBatch = (batch: Schedule[]) =>
    pool(
      batch,
      jobs,
      async (s) => {
        try {
          return await runSchedule(s, env);
        } catch (error) {
          const sandbox = join(base, `s${s.id}`);
          return {
            points: 0,
            runs: 0,
            notFired: 0,
            byFault: {},
            byKind: {},
            sandbox,
            violations: [{ schedule: s.id, faults: describeSchedule(s), run: -1, check: 'harness', message: (error as Error).stack ?? String(error), sandbox }],
          } satisfies ScheduleResult;
        }
      },
      (r) => {
        report.points += r.points;
        report.runs += r.runs;
        report.notFired += r.notFired;
        for (const [k, v] of Object.entries(r.byFault)) report.byFault[k] = (report.byFault[k] ?? 0) + v;
        for (const [k, v] of Object.entries(r.byKind)) report.byKind[k] = (report.byKind[k] ?? 0) + v;
        report.violations.push(...r.violations);
        for (const v of r.violations) log(`VIOLATION schedule ${v.schedule} [${v.faults}] run ${v.run} ${v.check}: ${v.message} (sandbox kept: ${v.sandbox})`);
        if (r.violations.length === 0 && !options.keepAll) rmSync(r.sandbox, { recursive: true, force: true });
        done += 1;
        const pct = Math.floor((done * 10) / total);
        if (pct !== lastPct) {
          lastPct = pct;
          log(
            `crash-test: ${done}/${total} schedules, ${report.points} points, ${report.violations.length} violations (${Math.round((Date.now() - started) / 1000)} s)`,
          );
        }
      },
    );
  await runBatch(schedules);
  // A random kill misses when the run ends first; top up with more random schedules until the target is reached.
  let nextId = schedules.length + 1;
  for (let round = 1; round <= 5 && report.points < target; round++) {
    const extra = extraRandomSchedules(seed + round * 7919, Math.ceil((target - report.points) * 0.8) + 2, nextId);
    nextId += extra.length;
    total += extra.length;
    report.schedules += extra.length;
    await runBatch(extra);
  }
  if (report.violations.length === 0 && !options.keepAll) rmSync(base, { recursive: true, force: true });
  report.durationMs = Date.now() - started;
  return report;
}
