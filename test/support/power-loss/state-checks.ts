/**
 * What must hold in every state a power cut can leave (crash-states.ts):
 * - every record written before a barrier the cut came after (mend printed a frame,
 *   answered over a socket, or started a tool process) is still in its log: a client
 *   was told, or a tool ran, so the record must have been durable;
 * - at every tool start, the record holding that call had been written;
 * - a file a `write_file` / `edit` result reports as written holds its new content
 *   wherever that result is in the log;
 * - every log loads without throwing, its plan is the same twice and its apiHistory
 *   passes validateProviderHistory, and the next append (the real SessionWriter on a
 *   copy) starts on a fresh line and reads back.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildPlanForSession } from '../../../src/recovery/build-plan.js';
import { validateProviderHistory } from '../../../src/recovery/validate-history.js';
import { SessionWriter } from '../../../src/session/log-writer.js';
import type { ChatRecord } from '../../../src/session/records.js';
import { loadSessionBytes } from '../../../src/session/session-loader.js';
import { statesAt, durableFrom, type CrashState } from './crash-states.js';
import { applyWrite, type DiskTrace } from './disk-ops.js';

export interface Violation {
  cutAt: number;
  state: string;
  rule:
    | 'acknowledged_record_lost'
    | 'tool_started_before_durable'
    | 'tool_call_not_written'
    | 'written_file_missing'
    | 'load_failed'
    | 'plan_unstable'
    | 'history_invalid'
    | 'append_not_fresh';
  detail: string;
}

export interface PowerLossReport {
  cutPoints: number;
  states: number;
  enumerated: number;
  /** States with at least one violation. */
  statesViolating: number;
  /** Plan kinds of the session logs over the states checked. */
  kinds: Record<string, number>;
  /** States whose log plans as degraded_history (allowed, but worth knowing: never auto-continued). */
  degraded: string[];
  violations: Violation[];
}

interface WrittenRecord {
  at: number;
  ino: number;
  path: string;
  uuid: string;
  record: Record<string, unknown>;
}

/** Which record lines each write completed, replaying the run's visible content. */
export function recordsWritten(trace: DiskTrace, isLog: (path: string) => boolean): WrittenRecord[] {
  const names = new Map(trace.initial);
  const data = new Map(trace.initialData);
  const out: WrittenRecord[] = [];
  const lines = new Map<number, number>();
  const scan = (ino: number, at: number) => {
    const path = [...names].find(([, i]) => i === ino)?.[0];
    if (path === undefined || !isLog(path)) return;
    const text = (data.get(ino) ?? Buffer.alloc(0)).toString('utf8').split('\n');
    const complete = text.slice(0, -1);
    for (let n = lines.get(ino) ?? 0; n < complete.length; n++) {
      const record = parseRecord(complete[n]!);
      if (record) out.push({ at, ino, path, uuid: String(record['uuid']), record });
    }
    lines.set(ino, complete.length);
  };
  for (const [, ino] of trace.initial) scan(ino, -1);
  for (const op of trace.ops) {
    if (op.t === 'create') names.set(op.path, op.ino);
    else if (op.t === 'link') {
      const ino = names.get(op.from);
      if (ino !== undefined) names.set(op.to, ino);
    } else if (op.t === 'rename') {
      const ino = names.get(op.from);
      names.delete(op.from);
      if (ino !== undefined) names.set(op.to, ino);
    } else if (op.t === 'unlink') names.delete(op.path);
    else if (op.t === 'write') {
      data.set(op.ino, applyWrite(data.get(op.ino) ?? Buffer.alloc(0), op.offset, op.data));
      scan(op.ino, op.at);
    }
  }
  return out;
}

function parseRecord(line: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(line) as unknown;
    return value && typeof value === 'object' && typeof (value as { uuid?: unknown }).uuid === 'string' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export interface CheckOptions {
  /** Which files are session logs. */
  isLog: (path: string) => boolean;
  /** The cwd of the run (relative tool paths). */
  cwd: string;
  /** At most this many states are checked (a deterministic sample keeps every cut's first and last). */
  maxStates?: number;
}

export async function checkPowerLoss(trace: DiskTrace, options: CheckOptions): Promise<PowerLossReport> {
  const durable = durableFrom(trace);
  const written = recordsWritten(trace, options.isLog);
  const syncedAt = syncedAtOf(trace);
  const violations: Violation[] = [];
  const cuts = [...new Set([...trace.ops.map((op) => op.at), ...trace.barriers.map((b) => b.at)])].sort((a, b) => a - b);

  // At each tool start, the record holding its call must have been written.
  for (const start of trace.toolStarts) {
    const line = start.argv.join(' ');
    const holder = written.find(
      (w) => w.at < start.at && callsOf(w.record).some((c) => typeof c.args['command'] === 'string' && line.includes(c.args['command'])),
    );
    if (!holder)
      violations.push({
        cutAt: start.at,
        state: '-',
        rule: 'tool_call_not_written',
        detail: `tool started (${line.slice(0, 80)}) with no record holding its call`,
      });
  }

  // The content a write_file/edit result vouches for: the target as it was when the result was written.
  const vouched = vouchedFiles(trace, written, options.cwd);

  const seen = new Set<string>();
  let enumerated = 0;
  let candidates: CrashState[] = [];
  for (const cutAt of cuts) {
    const states = statesAt(trace, durable, cutAt);
    enumerated += states.length;
    candidates.push(...states.filter((s) => !seen.has(`${s.cutAt}:${s.hash}`) && seen.add(`${s.cutAt}:${s.hash}`)));
  }
  candidates = sample(candidates, options.maxStates ?? Infinity);

  const scratch = mkdtempSync(join(tmpdir(), 'mend-power-loss-'));
  const logChecks = new Map<string, Violation['rule'] | null>();
  const logKinds = new Map<string, string>();
  const kinds: Record<string, number> = {};
  const degraded: string[] = [];
  const logDetail = new Map<string, string>();
  try {
    for (const state of candidates) {
      const barrier = lastBarrierBefore(trace, state.cutAt);
      const required = barrier ? written.filter((w) => w.at < barrier.at && acknowledges(barrier, w, syncedAt(w))) : [];
      const present = new Map<string, Set<string>>();
      const uuidsIn = (path: string) => {
        let set = present.get(path);
        if (!set) {
          set = new Set();
          const bytes = state.files.get(path);
          if (bytes)
            for (const line of bytes.toString('utf8').split('\n').slice(0, -1)) {
              const r = parseRecord(line);
              if (r) set.add(String(r['uuid']));
            }
          present.set(path, set);
        }
        return set;
      };
      for (const w of required) {
        if (uuidsIn(w.path).has(w.uuid)) continue;
        const rule = barrier!.kind === 'tool_start' ? 'tool_started_before_durable' : 'acknowledged_record_lost';
        violations.push({
          cutAt: state.cutAt,
          state: state.label,
          rule,
          detail: `${String(w.record['type'])} ${w.uuid} (${w.path.split('/').slice(-3).join('/')}) was written before ${barrier!.kind} "${barrier!.what.slice(0, 60)}" but is lost`,
        });
      }
      for (const v of vouched) {
        if (!uuidsIn(v.logPath).has(v.resultUuid)) continue;
        const actual = state.files.get(v.target);
        // What the result vouched for, or what a later step of the run made of the file.
        if (actual === undefined || !v.accepted.has(actual.toString('base64'))) {
          violations.push({
            cutAt: state.cutAt,
            state: state.label,
            rule: 'written_file_missing',
            detail: `${v.tool} result ${v.resultUuid} is in the log but ${v.target} ${actual === undefined ? 'does not exist' : 'holds other content'}`,
          });
        }
      }
      for (const [path, bytes] of state.files) {
        if (!options.isLog(path)) continue;
        const key = `${path}\0${bytes.toString('base64')}`;
        if (!logChecks.has(key)) {
          const { problem, kind } = await checkLog(path, bytes, scratch);
          logChecks.set(key, problem?.rule ?? null);
          logKinds.set(key, kind);
          if (problem) logDetail.set(key, problem.detail);
        }
        const kind = logKinds.get(key)!;
        kinds[kind] = (kinds[kind] ?? 0) + 1;
        if (kind === 'degraded_history') degraded.push(`line ${state.cutAt} [${state.label}] ${path.split('/').at(-1)}`);
        const rule = logChecks.get(key);
        if (rule) violations.push({ cutAt: state.cutAt, state: state.label, rule, detail: logDetail.get(key)! });
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return {
    cutPoints: cuts.length,
    states: candidates.length,
    enumerated,
    statesViolating: new Set(violations.map((v) => `${v.cutAt}:${v.state}`)).size,
    kinds,
    degraded,
    violations,
  };
}

/** When a written record became durable: the end of the first fsync of its file after the write (Infinity: never). */
function syncedAtOf(trace: DiskTrace): (w: WrittenRecord) => number {
  const syncs = new Map<number | string, number[]>();
  for (const op of trace.ops) if (op.t === 'fsync') (syncs.get(op.ino) ?? syncs.set(op.ino, []).get(op.ino)!).push(op.at);
  return (w) => syncs.get(w.ino)?.find((at) => at > w.at) ?? Infinity;
}

/**
 * Whether a barrier counts as acknowledging a record written before it. A tool start and
 * stdout (one session per process, every front end but the daemon) acknowledge every
 * record written before them: the strictest reading, which a writer that syncs each
 * record before it returns always meets. A socket message of a process that serves many
 * sessions goes out while other records are on their way to disk (the daemon's queued
 * writer: written, fsync pending on the thread pool): one sent before such a record's
 * fsync returned acknowledges it only if it reveals it, by naming its uuid (every event
 * of an assistant message or a tool result carries the record's uuid) or, for a user
 * record, by echoing its prompt text. Once the fsync returned, every later message
 * acknowledges the record, as before.
 */
export function acknowledges(barrier: DiskTrace['barriers'][number], w: WrittenRecord, syncedAt: number): boolean {
  if (barrier.kind !== 'socket' || syncedAt < barrier.at) return true;
  const text = barrier.text ?? '';
  if (text.includes(JSON.stringify(w.uuid))) return true;
  if (w.record['type'] !== 'user') return false;
  const parts = ((w.record['message'] as { parts?: Array<{ text?: unknown }> } | undefined)?.parts ?? []).filter((p) => typeof p.text === 'string');
  return parts.some((p) => text.includes(`"text":${JSON.stringify(p.text)}`));
}

function lastBarrierBefore(trace: DiskTrace, cutAt: number) {
  let last: DiskTrace['barriers'][number] | undefined;
  for (const b of trace.barriers) if (b.at <= cutAt) last = b;
  return last;
}

function callsOf(record: Record<string, unknown>): Array<{ id: string; name: string; args: Record<string, unknown> }> {
  const parts = ((record['message'] as { parts?: unknown[] } | undefined)?.parts ?? []) as Array<{
    functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  }>;
  return parts.filter((p) => p.functionCall).map((p) => ({ id: p.functionCall!.id ?? '', name: p.functionCall!.name, args: p.functionCall!.args ?? {} }));
}

interface Vouched {
  tool: string;
  resultUuid: string;
  logPath: string;
  target: string;
  /** base64 of the content at the result, and of every content the run gave the file after it. */
  accepted: Set<string>;
}

function vouchedFiles(trace: DiskTrace, written: readonly WrittenRecord[], cwd: string): Vouched[] {
  const out: Vouched[] = [];
  for (const w of written) {
    const result = w.record['toolCallResult'] as { callId?: string; status?: string } | undefined;
    if (w.record['type'] !== 'tool_result' || result?.status !== 'success') continue;
    const call = written.flatMap((r) => callsOf(r.record)).find((c) => c.id === result.callId);
    if (!call || (call.name !== 'write_file' && call.name !== 'edit')) continue;
    const target = resolve(cwd, String(call.args['file_path'] ?? call.args['path'] ?? ''));
    const accepted = new Set<string>();
    for (const at of [w.at, ...trace.ops.filter((op) => op.at > w.at).map((op) => op.at)]) {
      const content = visibleAt(trace, target, at);
      if (content !== undefined) accepted.add(content.toString('base64'));
    }
    out.push({ tool: call.name, resultUuid: w.uuid, logPath: w.path, target, accepted });
  }
  return out;
}

/** A file's content in the running system (not on disk) at a trace line. */
function visibleAt(trace: DiskTrace, path: string, at: number): Buffer | undefined {
  const names = new Map(trace.initial);
  const data = new Map(trace.initialData);
  for (const op of trace.ops) {
    if (op.at > at) break;
    if (op.t === 'create') names.set(op.path, op.ino);
    else if (op.t === 'link') {
      const ino = names.get(op.from);
      if (ino !== undefined) names.set(op.to, ino);
    } else if (op.t === 'rename') {
      const ino = names.get(op.from);
      names.delete(op.from);
      if (ino !== undefined) names.set(op.to, ino);
    } else if (op.t === 'unlink') names.delete(op.path);
    else if (op.t === 'write') data.set(op.ino, applyWrite(data.get(op.ino) ?? Buffer.alloc(0), op.offset, op.data));
    else if (op.t === 'truncate') {
      const next = Buffer.alloc(op.size);
      data.get(op.ino)?.copy(next, 0, 0, op.size);
      data.set(op.ino, next);
    }
  }
  const ino = names.get(path);
  return ino === undefined ? undefined : data.get(ino);
}

/** Load, plan twice, validate, then append one record through the real writer. */
async function checkLog(path: string, bytes: Buffer, scratch: string): Promise<{ problem: { rule: Violation['rule']; detail: string } | null; kind: string }> {
  const seen = { kind: 'load_failed' };
  const problem = await checkLogOnce(path, bytes, scratch, seen);
  return { problem, kind: seen.kind };
}

async function checkLogOnce(path: string, bytes: Buffer, scratch: string, seen: { kind: string }): Promise<{ rule: Violation['rule']; detail: string } | null> {
  const name = path.split('/').at(-1)!;
  let plans: string[];
  let leaf: string | null;
  let sessionId: string;
  try {
    const first = buildPlanForSession(await loadSessionBytes(bytes, path));
    const second = buildPlanForSession(await loadSessionBytes(Buffer.from(bytes), path));
    plans = [JSON.stringify(first), JSON.stringify(second)];
    const check = validateProviderHistory(first.apiHistory);
    if (!check.ok) return { rule: 'history_invalid', detail: `${name} (${bytes.length} bytes): ${check.problems.join('; ')}` };
    leaf = first.leafUuid;
    sessionId = first.sessionId;
    seen.kind = first.kind;
  } catch (error) {
    return { rule: 'load_failed', detail: `${name} (${bytes.length} bytes): ${(error as Error).message}` };
  }
  if (plans[0] !== plans[1]) return { rule: 'plan_unstable', detail: `${name}: two loads of the same bytes gave different plans` };

  const copy = join(scratch, name);
  writeFileSync(copy, bytes);
  const uuid = 'feedface-0000-4000-8000-000000000001';
  const record = {
    uuid,
    parentUuid: leaf,
    sessionId,
    timestamp: '2026-01-01T00:00:00.000Z',
    type: 'user',
    provenance: 'real_user',
    message: { role: 'user', parts: [{ text: 'after the power cut' }] },
  } as unknown as ChatRecord;
  try {
    const writer = SessionWriter.open(copy, { create: false });
    writer.append(record, { durable: false });
    writer.close();
  } catch (error) {
    return { rule: 'append_not_fresh', detail: `${name}: the append failed: ${(error as Error).message}` };
  }
  const after = readFileSync(copy);
  const line = Buffer.from(JSON.stringify(record) + '\n');
  const at = after.length - line.length;
  const fresh = at >= 0 && after.subarray(at).equals(line) && (at === 0 || after[at - 1] === 0x0a) && after.subarray(0, bytes.length).equals(bytes);
  if (!fresh) return { rule: 'append_not_fresh', detail: `${name}: the next record does not start on a fresh line` };
  const reloaded = await loadSessionBytes(after, path);
  if (reloaded.conversation.leafUuid !== uuid) return { rule: 'append_not_fresh', detail: `${name}: the appended record is not the leaf after a reload` };
  return null;
}

/** Deterministic: every state if they fit, else an even spread that keeps the first and last. */
function sample<T>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  const out: T[] = [];
  const step = (items.length - 1) / (max - 1);
  for (let i = 0; i < max; i++) out.push(items[Math.round(i * step)]!);
  return out;
}

export function summarize(name: string, report: PowerLossReport): string {
  const byRule = new Map<string, number>();
  for (const v of report.violations) byRule.set(v.rule, (byRule.get(v.rule) ?? 0) + 1);
  const rules = [...byRule].map(([r, n]) => `${r} ${n}`).join(', ');
  return `power-loss: ${name}: ${report.cutPoints} cut points, ${report.states} states checked (${report.enumerated} enumerated), ${report.statesViolating} states with violations, ${report.violations.length} violations${rules ? ` (${rules})` : ''}; plan kinds: ${Object.entries(
    report.kinds,
  )
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}`;
}

/**
 * PostgreSQL store: a record is durable once a commit with `synchronous_commit = on`
 * returned after it (WAL is flushed in order). So at every message mend sends a client,
 * the last append sent before it must have been committed synchronously.
 */
export function asyncCommitsBeforeAcks(trace: DiskTrace): { appends: number; acks: number; violations: string[] } {
  const events = [
    ...trace.dbWrites.map((w) => ({ at: w.at, db: w.text })),
    ...trace.barriers.filter((b) => b.kind !== 'tool_start').map((b) => ({ at: b.at, ack: b.what })),
  ].sort((a, b) => a.at - b.at);
  let mode: 'on' | 'off' = 'on';
  let lastAppend: 'on' | 'off' | null = null;
  let appends = 0;
  let acks = 0;
  const violations: string[] = [];
  for (const e of events) {
    if ('db' in e) {
      const set = /SET synchronous_commit = (on|off)/.exec(e.db!);
      if (set) mode = set[1] as 'on' | 'off';
      if (e.db!.includes('INSERT INTO mend.sessions')) {
        appends++;
        lastAppend = mode;
      }
    } else {
      acks++;
      if (lastAppend === 'off') violations.push(`"${e.ack!.slice(0, 60)}" was sent after an append committed with synchronous_commit = off`);
    }
  }
  return { appends, acks, violations };
}
