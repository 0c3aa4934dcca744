/**
 * The fuzz core behind `npm run fuzz` (scripts/fuzz.ts) and
 * test/recovery/fuzz-smoke.test.ts, plus the worker_threads entry the CLI runs
 * batches in (so a hang can be cut off and reported by batch seed).
 *
 * Every case is derived from its 32-bit case seed and global index, so any failure
 * can be replayed alone: `npm run fuzz -- --case <caseSeed> --index <index>` (which
 * also writes the generated log to a temp file).
 *
 * Case families:
 * - corpus: a fixture log with 1..4 random mutations (truncation, garbage lines,
 *   invalid UTF-8, flipped bytes, shuffled / duplicated / deleted / spliced lines,
 *   CRLF, BOM, re-pointed parents, reused uuids, wrong-typed fields);
 * - generated: a random log of every record type (fragments, cycles, gaps,
 *   checkpoints, markers, mixed session ids) with wrong types in random fields;
 * - wrong-type: a small valid log where exactly one field of one record, of any
 *   record type or system payload, gets a value of the wrong type (or is removed);
 * - stream: stream-json input through LineFramer (chunked anyhow, compared with an
 *   independent oracle) and the control.ts schemas, the way the CLI dispatches it;
 * - scheduled heavy cases: huge lines (2..4 MB), deep parent chains (100k records,
 *   with a cycle, a gap or a deep checkpoint) and deeply nested JSON values.
 *
 * A log case writes its bytes to a temp file, reads it with readSessionLog (random
 * chunk size), checks the reader's own invariants, builds the conversation and the
 * plan twice and checks the plan oracle (`checkPlan`). Nothing here writes outside
 * its own temp directory; fixtures are only read.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { cutAt, joinLines, splitLines } from './arbitraries.js';
import { buildSessionRecoveryPlan } from '../../src/recovery/build-plan.js';
import { PLAN_ID_PATTERN } from '../../src/recovery/plan-id.js';
import type { BuildPlanInput, SessionRecoveryPlan } from '../../src/recovery/plan-types.js';
import { validateProviderHistory } from '../../src/recovery/validate-history.js';
import type { LoadedSession } from '../../src/session/conversation.js';
import { buildConversation } from '../../src/session/conversation-loader.js';
import { readSessionLog, type ReadResult } from '../../src/session/log-reader.js';
import type { Content } from '../../src/session/records.js';
import { loadSession } from '../../src/session/session-loader.js';
import { isSessionId } from '../../src/session/session-paths.js';
import {
  ControlCancelRequestSchema,
  ControlRequestEnvelopeSchema,
  ControlResponseMessageSchema,
  HOST_CONTROL_SUBTYPES,
  HostControlRequestSchema,
  InboundLineSchema,
  InputUserMessageSchema,
  PermissionResultSchema,
} from '../../src/wire/control.js';
import { LineFramer, type FramedLine } from '../../src/wire/line-framer.js';

// ---- the plan oracle (shared with test/recovery/property.test.ts) ------------------------

export const PLAN_KINDS = ['clean', 'interrupted_prompt', 'interrupted_turn', 'degraded_history'] as const;

/** The input the CLI builds from a loaded session. */
export function planInputOf(loaded: LoadedSession, allowAutoContinue = false): BuildPlanInput {
  return {
    sessionId: loaded.conversation.sessionId,
    conversation: loaded.conversation,
    historyGaps: loaded.historyGaps,
    diagnostics: loaded.diagnostics,
    ...(allowAutoContinue ? { options: { allowAutoContinue: true } } : {}),
  };
}

/**
 * isDeepStrictEqual recurses: on values nested thousands deep it throws RangeError.
 * Such values are compared as equal (the comparison is the harness's, not mend's).
 */
export function sameValue(a: unknown, b: unknown): boolean {
  try {
    return isDeepStrictEqual(a, b);
  } catch (error) {
    if (error instanceof RangeError) return true;
    throw error;
  }
}

function lastModelIndex(history: readonly Content[]): number {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]?.role === 'model') return i;
  return -1;
}

/** Every invariant a plan must satisfy whatever the log was. Empty when all hold. */
export function planProblems(plan: SessionRecoveryPlan, again: SessionRecoveryPlan): string[] {
  const problems: string[] = [];
  const validation = validateProviderHistory(plan.apiHistory);
  if (!validation.ok) problems.push(`apiHistory fails validation: ${validation.problems.slice(0, 3).join('; ')}`);
  if (!sameValue(plan, again)) problems.push('plan is not deterministic: a second build differs');
  if (!PLAN_ID_PATTERN.test(plan.planId)) problems.push(`bad planId ${JSON.stringify(plan.planId)}`);
  if (!(PLAN_KINDS as readonly string[]).includes(plan.kind)) problems.push(`bad kind ${JSON.stringify(plan.kind)}`);
  if (plan.kind === 'degraded_history' && (plan.canContinue || plan.canAutoContinue)) {
    problems.push('degraded_history plan can continue');
  }
  if (plan.canAutoContinue && !plan.canContinue) problems.push('canAutoContinue without canContinue');
  if (plan.requiresUserConfirmation !== (plan.canContinue && !plan.canAutoContinue)) {
    problems.push('requiresUserConfirmation is not canContinue && !canAutoContinue');
  }
  const wantsContinuation = plan.kind === 'interrupted_prompt' || plan.kind === 'interrupted_turn';
  if (wantsContinuation !== (plan.continuation !== undefined)) {
    problems.push(`continuation ${plan.continuation ? 'present' : 'missing'} for kind ${plan.kind}`);
  }
  if (plan.continuation) {
    const after = plan.apiHistory.slice(lastModelIndex(plan.apiHistory) + 1).flatMap((entry) => entry.parts);
    if (!sameValue(plan.continuation.parts, after)) {
      problems.push('continuation.parts differ from the apiHistory parts after its last model entry');
    }
    const mode = plan.kind === 'interrupted_turn' ? 'tool_result_parts' : 'retry_user_parts';
    if (plan.continuation.mode !== mode) problems.push(`continuation mode ${plan.continuation.mode} for kind ${plan.kind}`);
    const responseIds = new Set(plan.continuation.parts.map((p) => p.functionResponse?.id));
    for (const id of plan.continuation.syntheticCallIds) {
      if (!responseIds.has(id)) problems.push(`syntheticCallId ${id} has no part in the continuation`);
    }
  }
  try {
    JSON.stringify(plan);
  } catch (error) {
    problems.push(`plan is not JSON-serializable: ${errorText(error)}`);
  }
  return problems;
}

/** Builds the plan twice and checks it. Throws only what the planner throws. */
export function checkPlan(input: BuildPlanInput): { plan: SessionRecoveryPlan; problems: string[] } {
  const plan = buildSessionRecoveryPlan(input);
  const again = buildSessionRecoveryPlan(input);
  return { plan, problems: planProblems(plan, again) };
}

/** What the reader itself promises about any byte sequence. */
export function readProblems(read: ReadResult, bytes: Buffer): string[] {
  const problems: string[] = [];
  if (read.bytes !== bytes.length) problems.push(`bytes ${read.bytes} != file size ${bytes.length}`);
  const endsWithNewline = bytes.length > 0 && bytes[bytes.length - 1] === 0x0a;
  if (read.endsWithNewline !== endsWithNewline) problems.push('endsWithNewline is wrong');
  let newlines = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) newlines++;
  const lines = newlines + (bytes.length > 0 && !endsWithNewline ? 1 : 0);
  if (read.lines !== lines) problems.push(`lines ${read.lines} != ${lines}`);
  const uuids = new Set<string>();
  let previousLine = 0;
  for (const { line, record } of read.records) {
    if (uuids.has(record.uuid)) problems.push(`uuid ${record.uuid} read twice (fragments not merged)`);
    uuids.add(record.uuid);
    if (line <= previousLine || line > lines) problems.push(`record line ${line} out of order or range`);
    previousLine = line;
    if (record.sessionId !== read.sessionId) problems.push('a record of another session was kept');
  }
  if (read.sessionId !== (read.records[0]?.record.sessionId ?? null)) problems.push("sessionId is not the first record's");
  for (const d of read.diagnostics) {
    if ('line' in d && (d.line < 1 || d.line > lines)) problems.push(`diagnostic ${d.code} on line ${d.line} of ${lines}`);
  }
  return problems;
}

// ---- random numbers ----------------------------------------------------------------------

/** A 32-bit integer hash (murmur3 finalizer over a xor-mixed pair). */
export function mix(a: number, b: number): number {
  let h = (Math.imul(a >>> 0, 0x9e3779b1) ^ Math.imul((b >>> 0) + 0x7f4a7c15, 0x85ebca6b)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** sfc32, seeded from one 32-bit seed. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = mix(seed, 1);
    this.b = mix(seed, 2);
    this.c = mix(seed, 3);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.next();
  }

  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** [0, n) */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor((this.next() / 0x100000000) * n);
  }

  /** [lo, hi] */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() / 0x100000000 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  weighted<T>(items: ReadonlyArray<readonly [number, T]>): T {
    let total = 0;
    for (const [w] of items) total += w;
    let roll = (this.next() / 0x100000000) * total;
    for (const [w, v] of items) {
      roll -= w;
      if (roll < 0) return v;
    }
    return items[items.length - 1]![1];
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.next() & 0xff;
    return out;
  }
}

// ---- generators --------------------------------------------------------------------------

const SESSION_IDS = ['11111111-2222-4333-8444-555555555555', '99999999-2222-4333-8444-555555555555', 'x'];
const TOOLS = ['run_shell_command', 'read_file', 'edit', 'write_file', 'list_directory'];
const SUBTYPES = ['chat_compression', 'turn_aborted', 'recovery', 'parent_session', 'slash_command', 'ui_telemetry', ''];

/** Byte sequences that are not valid UTF-8, plus a few awkward valid ones. */
const INVALID_UTF8: readonly Buffer[] = [
  Buffer.from([0xff]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0xc3]), // lone lead byte
  Buffer.from([0x80]), // lone continuation byte
  Buffer.from([0xe2, 0x82]), // truncated 3-byte sequence
  Buffer.from([0xf0, 0x9f, 0x98]), // truncated 4-byte sequence
  Buffer.from([0xed, 0xa0, 0x80]), // UTF-16 surrogate encoded in UTF-8
  Buffer.from([0xc0, 0xaf]), // overlong '/'
  Buffer.from([0xf4, 0x90, 0x80, 0x80]), // above U+10FFFF
  Buffer.from([0x00]),
  Buffer.from('\u2028\u2029\ufeff', 'utf8'),
  Buffer.from('é€😀', 'utf8'),
  Buffer.from('\r'),
];

function wrongValue(r: Rng): unknown {
  return r.weighted<() => unknown>([
    [3, () => null],
    [2, () => r.chance(0.5)],
    [2, () => r.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1])],
    [3, () => r.pick(['', 'x', 'model', 'user', 'assistant', 'tool_result', 'system', 'mend/0.1.0', '\u0000', 'é😀'])],
    [2, () => r.pick<unknown>([[], [1, 'a'], [null], [{}], [{ text: 1 }]])],
    [2, () => r.pick<unknown>([{}, { a: 1 }, { role: 'model' }, { parts: 'x' }, { functionCall: 'x' }])],
    [1, () => JSON.parse('{"__proto__":{"polluted":true},"constructor":"c","toString":1}') as unknown],
    [1, () => 'z'.repeat(r.range(1000, 100_000))],
    [1, () => nested(r.range(5, 200), r.chance(0.5))],
  ])();
}

function nested(depth: number, arrays: boolean): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
}

/** Deep nesting as JSON text without building the value (JSON.parse handles any depth). */
function nestedText(depth: number, arrays: boolean): string {
  return arrays ? '['.repeat(depth) + '1' + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

function someText(r: Rng): string {
  return r.weighted<() => string>([
    [5, () => r.pick(['hi', 'run the tests', 'done.', 'fix the bug in src/a.ts', ''])],
    [2, () => 'é€😀\u2028 \\ " \n'.repeat(r.range(1, 4))],
    [1, () => String.fromCharCode(...Array.from({ length: r.range(1, 20) }, () => r.int(0x10000)))],
  ])();
}

interface GenState {
  ids: string[];
  uuids: string[];
  sessionId: string;
  version: string;
  time: number;
}

function genCallId(r: Rng, s: GenState): string | undefined {
  return r.weighted<() => string | undefined>([
    [6, () => r.pick(s.ids)],
    [1, () => undefined],
    [1, () => ''],
  ])();
}

function genPart(r: Rng, s: GenState, role: 'user' | 'model'): Record<string, unknown> {
  const call = (): Record<string, unknown> => {
    const id = genCallId(r, s);
    return { ...(id === undefined ? {} : { id }), name: r.pick(TOOLS), args: { command: someText(r) } };
  };
  const response = (): Record<string, unknown> => {
    const id = genCallId(r, s);
    return { ...(id === undefined ? {} : { id }), name: r.pick(TOOLS), response: { output: someText(r) } };
  };
  return r.weighted<() => Record<string, unknown>>([
    [role === 'user' ? 4 : 5, () => ({ text: someText(r) })],
    [1, () => ({ text: someText(r), thought: true })],
    [role === 'model' ? 5 : 1, () => ({ functionCall: call() })],
    [role === 'user' ? 5 : 1, () => ({ functionResponse: response() })],
    [0.3, () => ({ functionCall: call(), functionResponse: response() })],
    [0.5, () => ({ inlineData: { mimeType: 'image/png', data: 'AAAA' } })],
    [0.3, () => ({})],
  ])();
}

function genParts(r: Rng, s: GenState, role: 'user' | 'model'): Record<string, unknown>[] {
  return Array.from(
    {
      length: r.weighted([
        [1, 0],
        [6, 1],
        [3, 2],
        [1, r.range(3, 6)],
      ]),
    },
    () => genPart(r, s, role),
  );
}

function genContent(r: Rng, s: GenState): Record<string, unknown> {
  const role = r.pick(['user', 'model'] as const);
  return { role, parts: genParts(r, s, role) };
}

function genSystemPayload(r: Rng, s: GenState, subtype: string): unknown {
  switch (subtype) {
    case 'chat_compression':
      return r.chance(0.8)
        ? { info: { originalTokenCount: 100 }, compressedHistory: Array.from({ length: r.range(0, 5) }, () => genContent(r, s)) }
        : { compressedHistory: wrongValue(r) };
    case 'turn_aborted':
      return { reason: r.chance(0.8) ? r.pick(['sigint', 'sigterm', 'interrupt']) : wrongValue(r) };
    case 'recovery':
      return r.chance(0.8)
        ? { planId: 'rp_0123456789abcdef', kind: r.pick(PLAN_KINDS), repairs: [], timestamp: '2026-01-01T00:00:00.000Z' }
        : { planId: 1, kind: 'x', repairs: wrongValue(r) };
    case 'parent_session':
      return { sourceSessionId: s.sessionId, sourceLeafUuid: r.chance(0.5) ? null : r.pick(s.uuids.length > 0 ? s.uuids : ['u']) };
    default:
      return r.chance(0.5) ? undefined : wrongValue(r);
  }
}

type Rec = Record<string, unknown>;

function genRecord(r: Rng, s: GenState, uuid: string, parentUuid: string | null, type?: string): Rec {
  const t =
    type ??
    r.weighted([
      [4, 'user'],
      [5, 'assistant'],
      [4, 'tool_result'],
      [2, 'system'],
    ] as const);
  s.time += r.range(1, 5000);
  const base: Rec = {
    uuid,
    parentUuid,
    sessionId: s.sessionId,
    timestamp: new Date(Date.UTC(2026, 0, 1) + s.time).toISOString(),
    type: t,
    provenance: { user: 'real_user', assistant: 'assistant_output', tool_result: 'tool_result', system: 'system' }[t] ?? 'x',
    cwd: '/tmp/project',
    version: s.version,
  };
  if (s.version !== 'mend/0.1.0') base.gitBranch = 'main';
  switch (t) {
    case 'user':
      return { ...base, message: { role: 'user', parts: genParts(r, s, 'user') }, ...(r.chance(0.1) ? { systemPayload: { displayText: 'x' } } : {}) };
    case 'assistant':
      return {
        ...base,
        model: 'qwen3-coder',
        message: { role: 'model', parts: genParts(r, s, 'model') },
        ...(r.chance(0.3) ? { usageMetadata: { promptTokenCount: 10 } } : {}),
      };
    case 'tool_result': {
      const id = genCallId(r, s);
      const part = { functionResponse: { ...(id === undefined ? {} : { id }), name: r.pick(TOOLS), response: { output: someText(r) } } };
      return {
        ...base,
        message: { role: 'user', parts: r.chance(0.9) ? [part] : genParts(r, s, 'user') },
        toolCallResult: { callId: id ?? '', status: r.pick(['success', 'error', 'cancelled']), resultDisplay: 'ok' },
        ...(r.chance(0.1) ? { recovery: { planId: 'rp_0123456789abcdef', synthetic: true } } : {}),
      };
    }
    default: {
      const subtype = r.pick(SUBTYPES);
      const payload = genSystemPayload(r, s, subtype);
      return { ...base, subtype, ...(payload === undefined ? {} : { systemPayload: payload }) };
    }
  }
}

/** Every (object, key) slot of a JSON value, depth-first. */
function slotsOf(value: unknown, out: Array<[Rec | unknown[], string | number]> = [], depth = 0): Array<[Rec | unknown[], string | number]> {
  if (depth > 8 || typeof value !== 'object' || value === null) return out;
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([value, i]);
      slotsOf(v, out, depth + 1);
    });
  } else {
    for (const [k, v] of Object.entries(value)) {
      out.push([value as Rec, k]);
      slotsOf(v, out, depth + 1);
    }
  }
  return out;
}

/** Optional fields a record may lack, so "wrong type" also covers fields that were absent. */
const OPTIONAL_FIELDS: Record<string, readonly string[]> = {
  user: ['provenance', 'cwd', 'version', 'gitBranch', 'subtype', 'systemPayload'],
  assistant: ['provenance', 'cwd', 'version', 'gitBranch', 'subtype', 'model', 'usageMetadata'],
  tool_result: ['provenance', 'cwd', 'version', 'gitBranch', 'subtype', 'toolCallResult', 'recovery'],
  system: ['provenance', 'cwd', 'version', 'gitBranch', 'systemPayload'],
};
const OPTIONAL_PART_FIELDS = ['text', 'thought', 'functionCall', 'functionResponse'];
const OPTIONAL_CALL_FIELDS = ['id', 'args'];

/** Gives one field of the record (at any depth, present or not) a value of a wrong type, or removes it. */
function mutateField(r: Rng, record: Rec): void {
  if (r.chance(0.25)) {
    // A field that may be absent: on the record, on a part, or on a call/response.
    const type = typeof record.type === 'string' ? record.type : 'user';
    const parts = (record.message as { parts?: unknown } | undefined)?.parts;
    if (Array.isArray(parts) && parts.length > 0 && r.chance(0.5)) {
      const part = parts[r.int(parts.length)] as Rec;
      if (typeof part === 'object' && part !== null) {
        const inner = (part.functionCall ?? part.functionResponse) as Rec | undefined;
        if (inner && typeof inner === 'object' && r.chance(0.5)) inner[r.pick(OPTIONAL_CALL_FIELDS)] = wrongValue(r);
        else part[r.pick(OPTIONAL_PART_FIELDS)] = wrongValue(r);
        return;
      }
    }
    record[r.pick(OPTIONAL_FIELDS[type] ?? OPTIONAL_FIELDS.user!)] = wrongValue(r);
    return;
  }
  const slots = slotsOf(record);
  if (slots.length === 0) return;
  const [holder, key] = r.pick(slots);
  if (r.chance(0.15)) {
    if (Array.isArray(holder)) holder.splice(key as number, 1);
    else delete holder[key as string];
  } else if (Array.isArray(holder)) {
    holder[key as number] = wrongValue(r);
  } else {
    holder[key as string] = wrongValue(r);
  }
}

interface GenLogOptions {
  records: number;
  mutationRate: number;
}

/** A random log: chains with random parents (null, missing, self, later, earlier), fragments, foreign sessions. */
function genLogRecords(r: Rng, opts: GenLogOptions): Rec[] {
  const s: GenState = {
    ids: Array.from({ length: r.range(1, 5) }, (_, i) => `call_${i}`),
    uuids: [],
    sessionId: r.pick(SESSION_IDS),
    version: r.pick(['mend/0.1.0', 'mend/0.1.0', '0.24.4']),
    time: 0,
  };
  const records: Rec[] = [];
  for (let i = 0; i < opts.records; i++) {
    const uuid = r.chance(0.08) && s.uuids.length > 0 ? r.pick(s.uuids) : `${r.pick(['u', 'a', 'r', 's'])}${i}`;
    const parentUuid = r.weighted<() => string | null>([
      [12, () => s.uuids.at(-1) ?? null],
      [1, () => null],
      [1, () => (s.uuids.length > 0 ? r.pick(s.uuids) : null)],
      [0.5, () => uuid],
      [0.5, () => `missing${r.int(3)}`],
      [0.5, () => `u${i + r.range(1, 3)}`],
    ])();
    const record = genRecord(r, s, uuid, parentUuid);
    if (r.chance(0.03)) record.sessionId = r.pick(SESSION_IDS);
    if (r.chance(opts.mutationRate)) mutateField(r, record);
    records.push(record);
    s.uuids.push(uuid);
  }
  return records;
}

/** Joins lines with random endings, blank lines, garbage lines and a torn tail. */
function serializeLines(r: Rng, lines: Buffer[], damage: number): Buffer {
  const out: Buffer[] = [];
  const crlf = r.chance(0.1);
  for (const line of lines) {
    if (r.chance(damage * 0.1)) out.push(r.pick([Buffer.from(''), Buffer.from('   '), Buffer.from('\t'), Buffer.from('\r')]), Buffer.from('\n'));
    if (r.chance(damage * 0.05)) out.push(garbage(r), Buffer.from('\n'));
    out.push(line, Buffer.from(crlf || r.chance(0.02) ? '\r\n' : '\n'));
  }
  if (r.chance(0.2)) out.pop(); // no final newline
  let buf = Buffer.concat(out);
  if (r.chance(damage * 0.3) && buf.length > 0) buf = buf.subarray(0, buf.length - r.range(1, Math.min(buf.length, 200)));
  if (r.chance(0.03)) buf = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf]);
  return buf;
}

function garbage(r: Rng): Buffer {
  const pieces: Buffer[] = [];
  const n = r.range(1, 6);
  for (let i = 0; i < n; i++) {
    pieces.push(
      r.weighted<() => Buffer>([
        [3, () => Buffer.from(r.bytes(r.range(0, 40)).map((b) => (b === 0x0a ? 0x20 : b)))],
        [3, () => r.pick(INVALID_UTF8)],
        [2, () => Buffer.from(r.pick(['{', '}', '[', '"', '{"uuid":"a1",', 'null', '1', '"x"', '{}', '[]', 'true', '{"type":"user"}']))],
        [1, () => Buffer.from('{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","message":{"role":"user","parts":[{"text":"')],
      ])(),
    );
  }
  return Buffer.concat(pieces);
}

function parseRecord(line: Buffer): Rec | null {
  try {
    const v = JSON.parse(line.toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : null;
  } catch {
    return null;
  }
}

/** 1..4 mutations of a corpus log. */
function mutateCorpus(r: Rng, corpus: readonly Buffer[]): Buffer {
  let buf = r.pick(corpus);
  const steps = r.range(1, 4);
  for (let k = 0; k < steps; k++) {
    const lines = splitLines(buf).lines;
    const finalNewline = buf.length > 0 && buf[buf.length - 1] === 0x0a;
    const at = (): number => r.int(lines.length);
    const op = r.pick([
      'truncate',
      'garbage-line',
      'insert-garbage',
      'flip-bytes',
      'invalid-utf8',
      'shuffle',
      'duplicate',
      'delete',
      'swap',
      'crlf',
      'bom',
      'splice',
      'reparent',
      'reuse-uuid',
      'wrong-type',
      'session-id',
    ] as const);
    switch (op) {
      case 'truncate':
        buf = buf.subarray(0, r.int(buf.length + 1));
        continue;
      case 'flip-bytes': {
        const copy = Buffer.from(buf);
        for (let i = r.range(1, 8); i > 0 && copy.length > 0; i--) copy[r.int(copy.length)] = r.next() & 0xff;
        buf = copy;
        continue;
      }
      case 'crlf':
        buf = Buffer.from(buf.toString('latin1').replace(/\n/g, '\r\n'), 'latin1');
        continue;
      case 'bom':
        buf = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf]);
        continue;
      // Line- and record-level edits: made below, on the buffer split into lines.
      case 'garbage-line':
      case 'insert-garbage':
      case 'invalid-utf8':
      case 'shuffle':
      case 'duplicate':
      case 'delete':
      case 'swap':
      case 'splice':
      case 'reparent':
      case 'reuse-uuid':
      case 'wrong-type':
      case 'session-id':
        break;
    }
    if (lines.length === 0) {
      lines.push(garbage(r));
    } else if (op === 'garbage-line') {
      lines[at()] = garbage(r);
    } else if (op === 'insert-garbage') {
      lines.splice(r.int(lines.length + 1), 0, garbage(r));
    } else if (op === 'invalid-utf8') {
      const i = at();
      const line = lines[i]!;
      const cut = r.int(line.length + 1);
      lines[i] = Buffer.concat([line.subarray(0, cut), r.pick(INVALID_UTF8), line.subarray(cut)]);
    } else if (op === 'shuffle') {
      r.shuffle(lines);
    } else if (op === 'duplicate') {
      for (let i = r.range(1, 3); i > 0; i--) lines.splice(r.int(lines.length + 1), 0, lines[at()]!);
    } else if (op === 'delete') {
      lines.splice(at(), r.range(1, 2));
    } else if (op === 'swap') {
      const i = at();
      const j = at();
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
    } else if (op === 'splice') {
      const other = splitLines(r.pick(corpus)).lines;
      if (other.length > 0) lines.splice(r.int(lines.length + 1), 0, ...other.slice(r.int(other.length)));
    } else {
      // Record-level edits: parse a line, change it, write it back compact.
      const i = at();
      const record = parseRecord(lines[i]!);
      if (record) {
        const others = lines.map(parseRecord).filter((x): x is Rec => x !== null);
        const otherUuid = (): unknown => r.pick(others).uuid;
        if (op === 'reparent') record.parentUuid = r.chance(0.3) ? record.uuid : otherUuid();
        else if (op === 'reuse-uuid') record.uuid = otherUuid();
        else if (op === 'session-id') record.sessionId = r.pick(SESSION_IDS);
        else mutateField(r, record);
        lines[i] = Buffer.from(JSON.stringify(record));
      }
    }
    buf = joinLines(lines, finalNewline || r.chance(0.5));
  }
  return buf;
}

/** A small valid log where exactly one field of one record is wrong (or gone). */
function wrongTypeLog(r: Rng): Buffer {
  const s: GenState = { ids: ['call_1', 'call_2'], uuids: [], sessionId: SESSION_IDS[0]!, version: 'mend/0.1.0', time: 0 };
  const types = ['user', 'assistant', 'tool_result', 'system', 'assistant', 'tool_result', 'system', 'user'];
  const records: Rec[] = [];
  types.forEach((type, i) => {
    const record = genRecord(r, s, `${type[0]}${i}`, s.uuids.at(-1) ?? null, type);
    records.push(record);
    s.uuids.push(`${type[0]}${i}`);
  });
  // Make the system records the ones mend interprets, with valid payloads before the damage.
  const system = records.filter((x) => x.type === 'system');
  const subtypes = r.shuffle(['chat_compression', 'turn_aborted', 'recovery', 'parent_session']);
  system.forEach((x, k) => {
    x.subtype = subtypes[k]!;
    x.systemPayload = genSystemPayload(r, s, subtypes[k]!);
  });
  mutateField(r, r.pick(records));
  return Buffer.from(records.map((x) => JSON.stringify(x)).join('\n') + '\n');
}

function generatedLog(r: Rng): Buffer {
  const records = genLogRecords(r, {
    records: r.weighted([
      [3, r.range(0, 6)],
      [4, r.range(6, 25)],
      [1, r.range(25, 120)],
    ]),
    mutationRate: r.pick([0, 0.05, 0.2, 0.6]),
  });
  const lines = records.map((x) => Buffer.from(JSON.stringify(x)));
  return serializeLines(r, lines, r.pick([0, 0.2, 1]));
}

/** A record line with `filler` inside a text part. */
function recordLine(uuid: string, parent: string | null, type: 'user' | 'assistant', text: string, extra = ''): string {
  const role = type === 'user' ? 'user' : 'model';
  return `{"uuid":"${uuid}","parentUuid":${parent === null ? 'null' : `"${parent}"`},"sessionId":"${SESSION_IDS[0]}","timestamp":"2026-01-01T00:00:00.000Z","type":"${type}","version":"mend/0.1.0","message":{"role":"${role}","parts":[{"text":${JSON.stringify(text)}${extra}}]}}`;
}

/** 2..4 MB lines: a valid record, a garbage line, a torn huge tail. */
function hugeLineLog(r: Rng): Buffer {
  const size = r.range(2 << 20, 4 << 20);
  const head = recordLine('u1', null, 'user', 'hello');
  const variant = r.int(4);
  if (variant === 0) {
    const text = (r.chance(0.5) ? 'é😀x' : 'abcdefgh').repeat(Math.ceil(size / 8)).slice(0, size / 2);
    return Buffer.from(`${head}\n${recordLine('a2', 'u1', 'assistant', text)}\n`);
  }
  if (variant === 1) {
    const junk = Buffer.alloc(size, 0x41);
    for (let i = 0; i < 64; i++) INVALID_UTF8[i % INVALID_UTF8.length]!.copy(junk, r.int(size - 8));
    junk.forEach((b, i) => {
      if (b === 0x0a) junk[i] = 0x20;
    });
    return Buffer.concat([Buffer.from(`${head}\n`), junk, Buffer.from(`\n${recordLine('a2', 'u1', 'assistant', 'after')}\n`)]);
  }
  const big = Buffer.from(`${recordLine('a2', 'u1', 'assistant', 'y'.repeat(size))}\n`);
  // Torn somewhere inside the huge line, or a huge line with nothing but whitespace.
  if (variant === 2) return Buffer.concat([Buffer.from(`${head}\n`), big.subarray(0, r.range(1, big.length - 1))]);
  return Buffer.concat([Buffer.from(`${head}\n`), Buffer.alloc(size, 0x20), Buffer.from('\n')]);
}

/** 100k-record parent chains: straight, closed into a cycle, cut by a gap, or with a checkpoint deep down. */
function deepChainLog(r: Rng, count = 100_000): Buffer {
  const variant = r.int(4);
  const lines: string[] = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    let parent: string | null = i === 0 ? null : `n${i - 1}`;
    if (i === 0 && variant === 1) parent = `n${count - 1 - r.int(10)}`; // the leaf's chain loops back
    if (variant === 2 && i === count >> 1) parent = 'gone';
    const type = i % 2 === 0 ? 'user' : 'assistant';
    lines[i] = recordLine(`n${i}`, parent, type, `t${i}`);
  }
  if (variant === 3) {
    const at = r.range(1, count - 1);
    lines[at] =
      `{"uuid":"n${at}","parentUuid":"n${at - 1}","sessionId":"${SESSION_IDS[0]}","timestamp":"t","type":"system","subtype":"chat_compression","systemPayload":{"compressedHistory":[{"role":"user","parts":[{"text":"summary"}]}]}}`;
  }
  return Buffer.from(lines.join('\n') + '\n');
}

/** A value nested `depth` deep inside a record field that reaches the history, the markers or nothing. */
function deepNestingLog(r: Rng): Buffer {
  const depth = r.weighted([
    [1, r.range(50, 500)],
    [2, r.range(500, 5000)],
    [1, r.range(5000, 100_000)],
  ]);
  const v = nestedText(depth, r.chance(0.5));
  const head = recordLine('u1', null, 'user', 'hi');
  const where = r.int(5);
  let line: string;
  if (where === 0) line = recordLine('a2', 'u1', 'assistant', 'x', `,"deep":${v}`);
  else if (where === 1) line = recordLine('a2', 'u1', 'assistant', 'x', `},{"functionCall":{"id":"c1","name":"read_file","args":{"d":${v}}}`);
  else if (where === 2) {
    line = `{"uuid":"a2","parentUuid":"u1","sessionId":"${SESSION_IDS[0]}","timestamp":"t","type":"assistant","usageMetadata":{"d":${v}},"message":{"role":"model","parts":[{"text":"x"}]}}`;
  } else if (where === 3) {
    line = `{"uuid":"a2","parentUuid":"u1","sessionId":"${SESSION_IDS[0]}","timestamp":"t","type":"system","subtype":"chat_compression","systemPayload":{"compressedHistory":[{"role":"user","parts":[{"text":"s","d":${v}}]}]}}`;
  } else {
    line = `{"uuid":"a2","parentUuid":"u1","sessionId":"${SESSION_IDS[0]}","timestamp":"t","type":"tool_result","toolCallResult":{"callId":"c","status":"ok","resultDisplay":${v}},"message":{"role":"user","parts":[{"text":"x"}]}}`;
  }
  return Buffer.from(`${head}\n${line}\n`);
}

// ---- stream-json input -------------------------------------------------------------------

function genInboundMessage(r: Rng): unknown {
  const id = (): string => r.pick(['req_1', 'req_2', '', 'x'.repeat(r.range(1, 40))]);
  const msg = r.weighted<() => Rec>([
    [
      4,
      () => ({
        type: 'user',
        session_id: SESSION_IDS[0],
        message: {
          role: 'user',
          content: r.chance(0.5) ? someText(r) : [{ type: 'text', text: someText(r) }, { type: r.pick(['image', 'tool_result', 'x']) }],
        },
        parent_tool_use_id: r.pick([null, 'toolu_1', undefined]),
      }),
    ],
    [
      4,
      () => ({
        type: 'control_request',
        request_id: id(),
        request: {
          subtype: r.chance(0.85) ? r.pick(HOST_CONTROL_SUBTYPES) : r.pick(['can_use_tool', 'nope', '', '__proto__']),
          mode: r.pick(['default', 'auto-edit', 'yolo', 'plan', 'bad']),
          model: r.pick(['qwen', '']),
          ...(r.chance(0.5) ? { plan_id: 'rp_0123456789abcdef' } : {}),
        },
      }),
    ],
    [
      2,
      () => ({
        type: 'control_response',
        response: r.chance(0.5)
          ? { subtype: 'success', request_id: id(), response: { behavior: r.pick(['allow', 'deny', 'x']), updatedInput: { a: 1 }, message: 'no' } }
          : { subtype: 'error', request_id: id(), error: 'bad', code: 'x' },
      }),
    ],
    [1, () => ({ type: 'control_cancel_request', request_id: id() })],
    [1, () => ({ type: r.pick(['assistant', 'system', 'result', 1, null]) })],
  ])();
  if (r.chance(0.4)) mutateField(r, msg);
  return msg;
}

/** How serve-stream-json dispatches one framed line; returns a label, throws only on a bug. */
export function dispatchInbound(line: FramedLine): string {
  if (!line.ok) return line.code;
  const value = line.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid_message';
  InboundLineSchema.safeParse(value);
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return 'missing_type';
  switch (type) {
    case 'user': {
      const parsed = InputUserMessageSchema.safeParse(value);
      if (!parsed.success) return `invalid_message:${parsed.error.issues[0]?.message ?? ''}`;
      const content = parsed.data.message.content;
      return typeof content === 'string' ? 'prompt' : `prompt:${content.length}`;
    }
    case 'control_request': {
      const envelope = ControlRequestEnvelopeSchema.safeParse(value);
      if (!envelope.success) return 'invalid_control_request';
      const request = HostControlRequestSchema.safeParse(envelope.data.request);
      if (request.success) return `control:${request.data.subtype}`;
      const known = (HOST_CONTROL_SUBTYPES as readonly string[]).includes(envelope.data.request.subtype);
      return `${known ? 'invalid_request' : 'unknown_subtype'}:${request.error.issues[0]?.message ?? ''}:${JSON.stringify(envelope.data.request.subtype)}`;
    }
    case 'control_response': {
      const parsed = ControlResponseMessageSchema.safeParse(value);
      if (!parsed.success) return 'unknown_request_id';
      if (parsed.data.response.subtype === 'success') PermissionResultSchema.safeParse(parsed.data.response.response);
      return `response:${parsed.data.response.request_id}`;
    }
    case 'control_cancel_request':
      return ControlCancelRequestSchema.safeParse(value).success ? 'cancel' : 'unknown_request_id';
    default:
      return `unknown_type:${JSON.stringify(type)}`;
  }
}

/** What LineFramer must return for `input`, computed line by line without it. */
export function expectedFraming(input: Buffer, maxLineBytes: number): Array<{ line: number; ok: boolean; code?: string; value?: unknown }> {
  const out: Array<{ line: number; ok: boolean; code?: string; value?: unknown }> = [];
  const lines = splitLines(input).lines;
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.length > maxLineBytes) {
      out.push({ line, ok: false, code: 'line_too_long' });
      return;
    }
    let text = raw.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    try {
      out.push({ line, ok: true, value: JSON.parse(text) as unknown });
    } catch {
      out.push({ line, ok: false, code: 'malformed_line' });
    }
  });
  return out;
}

function comparable(lines: readonly FramedLine[]): Array<{ line: number; ok: boolean; code?: string; value?: unknown }> {
  return lines.map((l) => (l.ok ? { line: l.line, ok: true, value: l.value } : { line: l.line, ok: false, code: l.code }));
}

/** Feeds `input` to a fresh framer in the given chunks. */
export function frameChunks(chunks: readonly Buffer[], maxLineBytes?: number): FramedLine[] {
  const framer = new LineFramer(maxLineBytes);
  const out: FramedLine[] = [];
  for (const chunk of chunks) out.push(...framer.push(chunk));
  out.push(...framer.end());
  return out;
}

/** Cuts `buf` at `cuts` random offsets (1-byte chunks when `bytewise`). */
function randomChunks(r: Rng, buf: Buffer, bytewise: boolean): Buffer[] {
  if (bytewise) return Array.from({ length: buf.length }, (_, i) => buf.subarray(i, i + 1));
  return cutAt(
    buf,
    Array.from({ length: r.range(0, 12) }, () => r.int(buf.length + 1)),
  );
}

function streamCase(r: Rng): string[] {
  const problems: string[] = [];
  const cap = r.weighted([
    [3, r.range(16, 4096)],
    [1, undefined],
  ] as const);
  const pieces: Buffer[] = [];
  const n = r.range(0, 12);
  for (let i = 0; i < n; i++) {
    pieces.push(
      r.weighted<() => Buffer>([
        [6, () => Buffer.from(JSON.stringify(genInboundMessage(r)))],
        [1, () => Buffer.from(JSON.stringify(wrongValue(r)) ?? 'null')],
        [2, () => garbage(r)],
        [1, () => Buffer.from(r.pick(['', ' ', '\t', '\r', ' \r']))],
        [0.5, () => Buffer.alloc(r.range(1, 9000), r.chance(0.5) ? 0x20 : 0x61)],
      ])(),
      Buffer.from(r.chance(0.2) ? '\r\n' : '\n'),
    );
  }
  if (r.chance(0.3)) pieces.pop(); // unterminated last line
  if (r.chance(0.002)) pieces.push(Buffer.alloc(r.range(1, 3) << 20, 0x7b), Buffer.from('\n{"type":"user"}\n')); // a few MB
  const input = Buffer.concat(pieces);
  const maxLineBytes = cap ?? 10 * 1024 * 1024;
  const whole = comparable(frameChunks([input], cap));
  const chunked = comparable(frameChunks(randomChunks(r, input, input.length < 400 && r.chance(0.2)), cap));
  if (!sameValue(whole, chunked)) problems.push('framing depends on chunk boundaries');
  const oracle = expectedFraming(input, maxLineBytes);
  if (!sameValue(whole, oracle)) problems.push('framing differs from the line-by-line oracle');
  for (const line of frameChunks([input], cap)) dispatchInbound(line);
  return problems;
}

// ---- running cases -----------------------------------------------------------------------

export type Family = 'corpus' | 'generated' | 'wrong-type' | 'stream' | 'huge-line' | 'deep-chain' | 'deep-nesting';

export interface FuzzContext {
  dir: string;
  corpus: Buffer[];
  counter: number;
}

export interface FuzzFailure {
  /** Global case index (it decides the scheduled heavy families). */
  index: number;
  caseSeed: number;
  family: Family;
  /** Every problem the case found. */
  problems: string[];
}

export interface BatchResult {
  batchSeed: number;
  cases: number;
  failures: FuzzFailure[];
  ms: number;
}

function findCorpusDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // scripts/ under tsx, dist/scripts/ once built.
  for (const dir of [resolve(here, '..', 'fixtures', 'crashes'), resolve(here, '..', '..', 'fixtures', 'crashes')]) {
    try {
      if (statSync(dir).isDirectory()) return dir;
    } catch {
      // try the next
    }
  }
  throw new Error('fixtures/crashes not found');
}

/** A RAM-backed directory when there is one (a case writes a file and reads it back), else the OS temp dir. */
function scratchRoot(): string {
  try {
    const probe = mkdtempSync(join('/dev/shm', 'mend-fuzz-probe-'));
    rmSync(probe, { recursive: true, force: true });
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

export function createContext(): FuzzContext {
  const corpusDir = findCorpusDir();
  const corpus = readdirSync(corpusDir)
    .filter((name) => statSync(join(corpusDir, name)).isDirectory())
    .sort()
    .map((name) => readFileSync(join(corpusDir, name, 'session.jsonl')));
  return { dir: mkdtempSync(join(scratchRoot(), 'mend-fuzz-')), corpus, counter: 0 };
}

export function disposeContext(ctx: FuzzContext): void {
  rmSync(ctx.dir, { recursive: true, force: true });
}

/** The family of a case: heavy families are scheduled by case index so every large run has them. */
export function familyOf(index: number, r: Rng): Family {
  if (index % 25_000 === 12_345) return 'deep-chain';
  if (index % 2_000 === 777) return 'huge-line';
  if (index % 500 === 250) return 'deep-nesting';
  return r.weighted<Family>([
    [35, 'corpus'],
    [30, 'generated'],
    [15, 'wrong-type'],
    [20, 'stream'],
  ]);
}

/** The bytes of a log case (used by runCase and by `--case` to write the input out). */
export function logBytes(ctx: FuzzContext, family: Family, r: Rng): Buffer {
  switch (family) {
    case 'corpus':
      return mutateCorpus(r, ctx.corpus);
    case 'generated':
      return generatedLog(r);
    case 'wrong-type':
      return wrongTypeLog(r);
    case 'huge-line':
      return hugeLineLog(r);
    case 'deep-chain':
      return deepChainLog(r);
    case 'deep-nesting':
      return deepNestingLog(r);
    case 'stream':
      throw new Error('stream cases have no log');
  }
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const frame = error.stack
      ?.split('\n')
      .find((l) => l.includes('/src/'))
      ?.trim();
    return `${error.name}: ${error.message}${frame ? ` (${frame})` : ''}`;
  }
  return String(error);
}

/** Tiny chunks (one read per chunk) only where they stay cheap. */
function pickChunkSize(r: Rng, size: number): number | undefined {
  // undefined is the reader's default (1 MB): realistic, but each read allocates 1 MB.
  if (r.chance(0.1)) return undefined;
  if (size <= 48) return r.pick([1, 2, 3, 7, 4096]);
  if (size <= 4096) return r.pick([61, 256, 1000, 4096, 65536]);
  return r.pick([4093, 4096, 65536]);
}

async function logCase(ctx: FuzzContext, r: Rng, bytes: Buffer): Promise<string[]> {
  const problems: string[] = [];
  // Half the files are named like a session id, which loadSession uses as the fallback id.
  const stem = r.chance(0.5) ? SESSION_IDS[1]! : 'session';
  const path = join(ctx.dir, `${ctx.counter++ % 64}`, `${stem}.jsonl`);
  writeFileSync(ensureDir(path), bytes);
  const chunkSize = pickChunkSize(r, bytes.length);
  const options = chunkSize === undefined ? {} : { chunkSize };
  // The file name's id wins over the records' majority, as loadSession reads it.
  const readOptions = isSessionId(stem) ? { ...options, fileSessionId: stem } : options;

  let read: ReadResult;
  try {
    read = await readSessionLog(path, readOptions);
  } catch (error) {
    return [`readSessionLog threw ${errorText(error)}`];
  }
  problems.push(...readProblems(read, bytes));
  if (r.chance(0.2) && bytes.length < 1 << 20) {
    const other = await readSessionLog(path, { ...readOptions, chunkSize: pickChunkSize(r, bytes.length) ?? 1 << 20 });
    if (!sameValue(other, read)) problems.push('reader result depends on the chunk size');
  }

  let loaded: LoadedSession;
  try {
    loaded = buildConversation(read, isSessionId(stem) ? { fallbackSessionId: stem } : {});
  } catch (error) {
    return [...problems, `buildConversation threw ${errorText(error)}`];
  }
  if (r.chance(0.1)) {
    let viaLoader: LoadedSession | null = null;
    try {
      viaLoader = await loadSession(path, options);
    } catch (error) {
      problems.push(`loadSession threw ${errorText(error)}`);
    }
    if (viaLoader && !sameValue(viaLoader, loaded)) problems.push('loadSession differs from read + buildConversation');
  }

  try {
    problems.push(...checkPlan(planInputOf(loaded, r.chance(0.3))).problems);
  } catch (error) {
    problems.push(`buildSessionRecoveryPlan threw ${errorText(error)}`);
  }
  return problems;
}

const madeDirs = new Set<string>();
function ensureDir(path: string): string {
  const dir = dirname(path);
  if (!madeDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    madeDirs.add(dir);
  }
  return path;
}

/** The seed of case `index` of the batch with `batchSeed`. */
export function caseSeedOf(batchSeed: number, index: number): number {
  return mix(batchSeed, index);
}

/** Runs one case; returns its family and problems. Never throws for a bug in mend: that is a problem. */
export async function runCase(ctx: FuzzContext, caseSeed: number, index: number): Promise<{ family: Family; problems: string[] }> {
  const r = new Rng(caseSeed);
  const family = familyOf(index, r);
  try {
    if (family === 'stream') return { family, problems: streamCase(r) };
    return { family, problems: await logCase(ctx, r, logBytes(ctx, family, r)) };
  } catch (error) {
    return { family, problems: [`uncaught ${errorText(error)}`] };
  }
}

/**
 * Runs `count` cases of a batch, `parallel` at a time (a case mostly waits on its
 * file being read back, so overlapping them keeps a worker busy). `firstIndex` is
 * the global index of the first case (it schedules the heavy families); `onWindow`
 * is told which cases are about to run, so a hang can name them.
 */
export async function runBatch(
  ctx: FuzzContext,
  batchSeed: number,
  count: number,
  firstIndex = 0,
  onWindow?: (from: number, to: number) => void,
  parallel = 8,
): Promise<BatchResult> {
  const started = performance.now();
  const failures: FuzzFailure[] = [];
  for (let i = 0; i < count; i += parallel) {
    const indexes = Array.from({ length: Math.min(parallel, count - i) }, (_, k) => firstIndex + i + k);
    onWindow?.(indexes[0]!, indexes.at(-1)!);
    const outcomes = await Promise.all(
      indexes.map(async (index) => {
        const caseSeed = caseSeedOf(batchSeed, index);
        return { index, caseSeed, ...(await runCase(ctx, caseSeed, index)) };
      }),
    );
    for (const { index, caseSeed, family, problems } of outcomes) {
      if (problems.length > 0) failures.push({ index, caseSeed, family, problems });
    }
  }
  return { batchSeed, cases: count, failures, ms: performance.now() - started };
}

// ---- worker entry ------------------------------------------------------------------------

export interface BatchRequest {
  batchSeed: number;
  count: number;
  firstIndex: number;
}

export type WorkerMessage = { type: 'ready'; dir: string } | { type: 'window'; from: number; to: number } | { type: 'done'; result: BatchResult };

if (!isMainThread && (workerData as { mendFuzz?: boolean } | null)?.mendFuzz === true && parentPort) {
  const port = parentPort;
  const ctx = createContext();
  port.postMessage({ type: 'ready', dir: ctx.dir } satisfies WorkerMessage);
  // The parent terminates the worker and removes ctx.dir when it is done with it.
  port.on('message', (request: BatchRequest) => {
    void runBatch(ctx, request.batchSeed, request.count, request.firstIndex, (from, to) => {
      port.postMessage({ type: 'window', from, to } satisfies WorkerMessage);
    }).then((result) => port.postMessage({ type: 'done', result } satisfies WorkerMessage));
  });
}
