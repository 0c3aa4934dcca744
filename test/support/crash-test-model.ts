/**
 * The crash test's model of the world, independent of mend's own code: the scripted
 * scenario, what each run is expected to append, the table that maps the last durable
 * record (and its state) to the recovery kind a kill there implies, and the schedule
 * of kill points. Nothing here reads a plan; the plan is what gets checked against it.
 */

// ---- the scenario ---------------------------------------------------------------------------------

export interface ScenarioCall {
  id: string;
  name: 'run_shell_command' | 'write_file';
  /** Seconds the shell command sleeps between its "start" and "end" marker lines. */
  sleep?: number;
}

export interface ScenarioResponse {
  /** Tag that starts the text, so the log tells which response was played. */
  tag: string;
  thought?: string;
  text: string;
  calls: ScenarioCall[];
  chunkSize: number;
  delayMs: number;
}

/**
 * Response r is what the scripted model plays when the history holds r model entries.
 * r0: thought + streamed text + three parallel calls (two shell commands, one write_file);
 * r1: streamed text + a shell command and a write_file; r2: the final answer;
 * r3..: answers to follow-up prompts on a clean session.
 */
export const SCENARIO: readonly ScenarioResponse[] = [
  {
    tag: '[r0]',
    thought: 'Plan: two checks in parallel, then write the notes file.',
    text: '[r0] Running two checks in parallel and writing the notes file.',
    calls: [
      { id: 'call_a1', name: 'run_shell_command', sleep: 0.12 },
      { id: 'call_a2', name: 'run_shell_command', sleep: 0.03 },
      { id: 'call_a3', name: 'write_file' },
    ],
    chunkSize: 6,
    delayMs: 4,
  },
  {
    tag: '[r1]',
    text: '[r1] Both checks ran. One more command and the summary file.',
    calls: [
      { id: 'call_b1', name: 'run_shell_command', sleep: 0.08 },
      { id: 'call_b2', name: 'write_file' },
    ],
    chunkSize: 5,
    delayMs: 3,
  },
  { tag: '[r2]', text: '[r2] All done: both checks passed and the files are written.', calls: [], chunkSize: 4, delayMs: 3 },
];

/** Answers for follow-up prompts: plain text, no calls. */
export function responseAt(r: number): ScenarioResponse {
  return SCENARIO[r] ?? { tag: `[r${r}]`, text: `[r${r}] Follow-up answer number ${r}.`, calls: [], chunkSize: 8, delayMs: 2 };
}

export const FOLLOW_UP_RESPONSES = 8;
export const PROMPT = 'Run the checks and write the notes.';
export const FOLLOW_UP_PROMPT = 'Anything else to report?';

export function shellCalls(): ScenarioCall[] {
  return SCENARIO.flatMap((r) => r.calls.filter((c) => c.name === 'run_shell_command'));
}

export function callById(id: string): ScenarioCall | undefined {
  return SCENARIO.flatMap((r) => r.calls).find((c) => c.id === id);
}

// ---- abstract records -----------------------------------------------------------------------------

/** A log record reduced to what the model predicts about it. */
export type AbstractRecord =
  | { t: 'user' }
  | { t: 'assistant'; r: number; calls: string[] }
  | { t: 'result'; id: string; synthetic: boolean }
  | { t: 'recovery' }
  | { t: 'other'; what: string };

export function keyOf(rec: AbstractRecord): string {
  switch (rec.t) {
    case 'user':
      return 'user';
    case 'assistant':
      return `assistant[r${rec.r}]`;
    case 'result':
      return `result:${rec.id}${rec.synthetic ? '(synthetic)' : ''}`;
    case 'recovery':
      return 'system:recovery';
    case 'other':
      return `other:${rec.what}`;
  }
}

// ---- the kind table -------------------------------------------------------------------------------

export type Kind = 'clean' | 'interrupted_prompt' | 'interrupted_turn';

export interface TailState {
  /** Number of model entries (assistant records) durable in the log. */
  modelEntries: number;
  /** The last non-system record, or 'none'. */
  last: 'none' | 'user' | 'assistant' | 'result';
  /** Calls of the last assistant record. */
  lastCalls: string[];
  /** Those of lastCalls that have a result after it. */
  answered: string[];
}

export function tailState(records: readonly AbstractRecord[]): TailState {
  const state: TailState = { modelEntries: 0, last: 'none', lastCalls: [], answered: [] };
  for (const rec of records) {
    if (rec.t === 'user') state.last = 'user';
    else if (rec.t === 'assistant') {
      state.modelEntries += 1;
      state.last = 'assistant';
      state.lastCalls = [...rec.calls];
      state.answered = [];
    } else if (rec.t === 'result') {
      state.last = 'result';
      if (state.lastCalls.includes(rec.id) && !state.answered.includes(rec.id)) state.answered.push(rec.id);
    }
    // system records (recovery) do not change the tail
  }
  return state;
}

/**
 * "Last complete record type + state" -> kind. A torn record counts as not written
 * (a torn tail that still parses as a whole record, i.e. only its newline is missing,
 * is complete: every byte of the record is there). System records are skipped.
 */
export const KIND_TABLE: ReadonlyArray<{ when: string; kind: Kind; test: (s: TailState) => boolean }> = [
  { when: 'nothing written yet', kind: 'clean', test: (s) => s.last === 'none' },
  { when: 'user prompt', kind: 'interrupted_prompt', test: (s) => s.last === 'user' },
  { when: 'assistant with calls, no results yet', kind: 'interrupted_turn', test: (s) => s.last === 'assistant' && s.lastCalls.length > 0 },
  { when: 'assistant with final text (no calls)', kind: 'clean', test: (s) => s.last === 'assistant' && s.lastCalls.length === 0 },
  {
    when: 'tool result, not all calls of the last assistant answered',
    kind: 'interrupted_turn',
    test: (s) => s.last === 'result' && s.answered.length < s.lastCalls.length,
  },
  {
    when: 'tool result, all calls of the last assistant answered',
    kind: 'interrupted_prompt',
    test: (s) => s.last === 'result' && s.answered.length === s.lastCalls.length,
  },
];

export function expectedKind(state: TailState): { kind: Kind; row: string } {
  const row = KIND_TABLE.find((r) => r.test(state));
  if (!row) throw new Error(`kind table has no row for ${JSON.stringify(state)}`);
  return { kind: row.kind, row: row.when };
}

// ---- what a run appends ---------------------------------------------------------------------------

export type RunMode = 'new' | 'continue' | 'follow-up';

export interface PredictedRun {
  mode: RunMode;
  records: AbstractRecord[];
  /** Model requests the run makes (one message_start each with partial messages). */
  modelRequests: number;
}

function play(from: number): { records: AbstractRecord[]; requests: number } {
  const records: AbstractRecord[] = [];
  let requests = 0;
  for (let r = from; r < from + 50; r++) {
    const resp = responseAt(r);
    requests += 1;
    records.push({ t: 'assistant', r, calls: resp.calls.map((c) => c.id) });
    for (const c of resp.calls) records.push({ t: 'result', id: c.id, synthetic: false });
    if (resp.calls.length === 0) break;
  }
  return { records, requests };
}

/**
 * The next run after a crash: a new session when no log exists, `--continue-interrupted`
 * for an interrupted kind (a recovery record, one synthetic result per unanswered call,
 * then the rest of the script), a follow-up `-p` prompt for a clean one.
 */
export function nextRun(logExists: boolean, durable: readonly AbstractRecord[]): PredictedRun {
  const state = tailState(durable);
  const { kind } = expectedKind(state);
  if (!logExists) {
    const p = play(0);
    return { mode: 'new', records: [{ t: 'user' }, ...p.records], modelRequests: p.requests };
  }
  if (kind === 'clean') {
    const p = play(state.modelEntries);
    return { mode: 'follow-up', records: [{ t: 'user' }, ...p.records], modelRequests: p.requests };
  }
  const synthetic: AbstractRecord[] =
    kind === 'interrupted_turn'
      ? state.lastCalls.filter((id) => !state.answered.includes(id)).map((id) => ({ t: 'result' as const, id, synthetic: true }))
      : [];
  const p = play(state.modelEntries);
  return { mode: 'continue', records: [{ t: 'recovery' }, ...synthetic, ...p.records], modelRequests: p.requests };
}

// ---- kill points ----------------------------------------------------------------------------------

/** A write index: absolute (1-based), or a fraction of the run's predicted writes resolved at run time. */
export type WriteIndex = number | { frac: number };

export type Trigger =
  /** Kill while the u-th shell command of the run is in flight (delay after its "start" line). */
  | { on: 'tool'; u: number; delayU: number }
  /** Kill while the model streams: after the u-th message_start of the run, plus a delay. */
  | { on: 'stream'; u: number; delayU: number }
  /** Kill at a random moment of the run. */
  | { on: 'time'; u: number };

export type Fault = { kind: 'kill-after-write'; n: WriteIndex } | { kind: 'torn-write'; n: WriteIndex; bytes: number } | { kind: 'external'; trigger: Trigger };

export interface Schedule {
  id: number;
  category: string;
  /** faults[i] is injected into run i; one more run follows, to completion. */
  faults: Fault[];
}

/** Byte counts for torn writes: nothing, one byte, mid-record, and "all but the newline". */
export const TORN_BYTES = [0, 1, 37, 150, 1_000_000] as const;

export function describeFault(f: Fault): string {
  const n = (i: WriteIndex) => (typeof i === 'number' ? String(i) : `~${Math.round(i.frac * 100)}%`);
  switch (f.kind) {
    case 'kill-after-write':
      return `kill-after-write:${n(f.n)}`;
    case 'torn-write':
      return `torn-write:${n(f.n)}:${f.bytes}`;
    case 'external': {
      const t = f.trigger;
      if (t.on === 'time') return `kill -9 at ${Math.round(t.u * 100)}% of the run`;
      return `kill -9 during ${t.on === 'tool' ? 'a tool' : 'the model stream'} (u=${t.u.toFixed(2)}, delay=${t.delayU.toFixed(2)})`;
    }
  }
}

export function describeSchedule(s: Schedule): string {
  return s.faults.map(describeFault).join(' > ');
}

/** MEND_FAULT value for a fault whose write index is resolved. */
export function faultEnv(f: Fault, n: number): string | undefined {
  if (f.kind === 'kill-after-write') return `kill-after-write:${n}`;
  if (f.kind === 'torn-write') return `torn-write:${n}:${f.bytes}`;
  return undefined;
}

export function resolveIndex(i: WriteIndex, predictedWrites: number): number {
  if (typeof i === 'number') return i;
  return Math.min(predictedWrites, 1 + Math.floor(i.frac * predictedWrites));
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], rand: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** The records a kill after `n` writes of `run` leaves durable. */
function afterWrites(durable: readonly AbstractRecord[], run: PredictedRun, n: number): AbstractRecord[] {
  return [...durable, ...run.records.slice(0, n)];
}

function externalFault(rand: () => number): Fault {
  const y = rand();
  const on = y < 0.4 ? 'tool' : y < 0.8 ? 'stream' : 'time';
  return { kind: 'external', trigger: on === 'time' ? { on, u: rand() } : { on, u: rand(), delayU: rand() } };
}

function randomFault(rand: () => number): Fault {
  const x = rand();
  if (x < 0.5) return externalFault(rand);
  if (x < 0.85) return { kind: 'kill-after-write', n: { frac: rand() } };
  return { kind: 'torn-write', n: { frac: rand() }, bytes: Math.floor(rand() * 400) };
}

/**
 * Every kill point, by category. Systematic: kill-after-write at every write of the first
 * run, torn writes at every write and several byte counts, and every pair (first run
 * killed at write n, its continuation killed at write m). Random: kill -9 from outside
 * while a tool runs or the model streams, alone or chained with other faults.
 */
export function allSchedules(seed: number, randomCount: number): Map<string, Fault[][]> {
  const rand = rng(seed ^ 0x5eed);
  const cats = new Map<string, Fault[][]>();
  const first = nextRun(false, []);
  const w = first.records.length;

  const kaw: Fault[][] = [];
  const torn: Fault[][] = [];
  for (let n = 1; n <= w; n++) {
    kaw.push([{ kind: 'kill-after-write', n }]);
    for (const bytes of TORN_BYTES) torn.push([{ kind: 'torn-write', n, bytes }]);
  }
  cats.set('kill-after-write', kaw);
  cats.set('torn-write', torn);

  const pairs: Fault[][] = [];
  const pairsTorn: Fault[][] = [];
  for (let n = 1; n <= w; n++) {
    const durable = afterWrites([], first, n);
    const second = nextRun(true, durable);
    for (let m = 1; m <= second.records.length; m++) {
      pairs.push([
        { kind: 'kill-after-write', n },
        { kind: 'kill-after-write', n: m },
      ]);
      for (const bytes of [1, 150, 1_000_000])
        pairsTorn.push([
          { kind: 'kill-after-write', n },
          { kind: 'torn-write', n: m, bytes },
        ]);
    }
    for (const bytes of [37, 1_000_000])
      pairsTorn.push([
        { kind: 'torn-write', n, bytes },
        { kind: 'kill-after-write', n: { frac: rand() } },
      ]);
  }
  cats.set('kill-after-write pairs', pairs);
  cats.set('torn-write pairs', pairsTorn);

  const external: Fault[][] = [];
  for (let i = 0; i < randomCount; i++) {
    const depth = rand() < 0.55 ? 1 : rand() < 0.75 ? 2 : 3;
    const faults: Fault[] = [];
    const ext = Math.floor(rand() * depth);
    for (let k = 0; k < depth; k++) {
      faults.push(k === ext ? externalFault(rand) : randomFault(rand));
    }
    external.push(faults);
  }
  cats.set('kill -9 from outside (random moments)', external);
  return cats;
}

/** `count` more random schedules (kill -9 from outside, alone or chained), ids from `firstId`. */
export function extraRandomSchedules(seed: number, count: number, firstId: number): Schedule[] {
  const list = allSchedules(seed, count).get(RANDOM_CATEGORY) ?? [];
  return list.map((faults, i) => ({ id: firstId + i, category: RANDOM_CATEGORY, faults }));
}

export const RANDOM_CATEGORY = 'kill -9 from outside (random moments)';

export interface ScheduleOptions {
  /** Kill points wanted (each fault of a schedule is one point). */
  points: number;
  /** Every systematic point, plus random ones up to max(points, 1000). */
  full: boolean;
  seed: number;
}

const WEIGHTS: Record<string, number> = {
  'kill-after-write': 0.2,
  'torn-write': 0.2,
  'kill-after-write pairs': 0.15,
  'torn-write pairs': 0.15,
  'kill -9 from outside (random moments)': 0.3,
};

export function planSchedules(opts: ScheduleOptions): Schedule[] {
  const target = opts.full ? Math.max(opts.points, 1000) : opts.points;
  const rand = rng(opts.seed);
  // Enough random schedules for any budget; only as many as needed are used.
  const cats = allSchedules(opts.seed, Math.max(50, target));
  const out: Schedule[] = [];
  let id = 0;
  const add = (category: string, faults: Fault[]) => out.push({ id: ++id, category, faults });
  const pointsOf = (list: Schedule[]) => list.reduce((n, s) => n + s.faults.length, 0);

  if (opts.full) {
    for (const [category, list] of cats) if (category !== 'kill -9 from outside (random moments)') for (const f of list) add(category, f);
    const ext = cats.get('kill -9 from outside (random moments)') ?? [];
    for (const f of ext) {
      if (pointsOf(out) >= target) break;
      add('kill -9 from outside (random moments)', f);
    }
    return out;
  }

  let carry = 0;
  const names = [...cats.keys()];
  names.forEach((category, idx) => {
    const list = cats.get(category) ?? [];
    const last = idx === names.length - 1;
    let budget = last ? target - pointsOf(out) : Math.round(target * (WEIGHTS[category] ?? 0)) + carry;
    // Depth-1 kill-after-write points go in order so a small sample still covers early and late writes.
    const ordered = category === 'kill-after-write' ? spread(list, budget) : shuffle(list, rand);
    let used = 0;
    for (const f of ordered) {
      if (used + f.length > budget) continue;
      add(category, f);
      used += f.length;
    }
    carry = Math.max(0, budget - used);
    budget = 0;
  });
  return out;
}

/** Up to `budget` items spread evenly over the list. */
function spread<T>(list: T[], budget: number): T[] {
  if (budget >= list.length) return list;
  const out: T[] = [];
  for (let i = 0; i < budget; i++) out.push(list[Math.floor((i * list.length) / budget)]!);
  return out;
}
