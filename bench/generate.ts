/**
 * Deterministic generator of realistic session logs for the benchmark.
 *
 * Records are built with the engine's own RecordBuilder (so they have exactly
 * the shape mend writes: provenance, cwd, `version: "mend/0.1.0"`, usage
 * metadata, toolCallResult) and chained through parentUuid. Every session ends
 * with an interrupted turn (an assistant record with two calls, only one of
 * which has a result), so loading it exercises classification, repair, the
 * continuation and the plan id, as a resume after a crash does.
 *
 * Profiles:
 * - `large`: user prompts of a few hundred to a few thousand characters,
 *   assistant records with a thought, text and 1-3 tool calls (write_file and
 *   edit calls carry whole files), tool results of 0.5-40 KB (file contents,
 *   shell output, listings), long final answers.
 * - `small`: the same turn structure with short texts and outputs (about 350
 *   bytes a record), to measure per-record costs.
 *
 * Files go to `.bench/` under a name derived from the parameters, next to a
 * `.meta.json`; an existing pair with the same parameters is reused.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { RecordBuilder } from '../src/engine/record-builder.js';
import { ChatRecordSchema, type ChatRecord, type Part } from '../src/session/records.js';

/** Bump when the generated content changes, so cached files are regenerated. */
const GENERATOR_VERSION = 4;

export interface SessionSpec {
  label: string;
  profile: 'large' | 'small';
  /** Stop adding turns once the file reaches this many bytes (large profile)... */
  targetBytes?: number;
  /** ...or once it holds exactly this many records (small profile). */
  records?: number;
  seed: number;
}

export interface GeneratedSession {
  spec: SessionSpec;
  path: string;
  bytes: number;
  records: number;
  reused: boolean;
}

// ---- deterministic randomness ----------------------------------------------------------

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  /** mulberry32 */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  uuid(): string {
    const hex = (n: number): string => {
      let s = '';
      for (let i = 0; i < n; i++) s += Math.floor(this.next() * 16).toString(16);
      return s;
    };
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${this.pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
  }
}

// ---- text material -----------------------------------------------------------------------

export const WORDS = (
  'the a to of and in is it that for on with as this be are not by file function test error value return ' +
  'session record parent chain recovery plan tool call result model user history load read write edit ' +
  'config build module import export type interface const let async await promise stream buffer line ' +
  'should could would because however therefore first then finally check fix update change refactor ' +
  'über naïve café déjà 数据 日志 — “quoted” ‘single’ …'
).split(' ');

const CODE_LINES = [
  "import { readFileSync } from 'node:fs';",
  'export function parseConfig(text: string): Config {',
  '  const value = JSON.parse(text) as Record<string, unknown>;',
  '  if (typeof value.name !== "string") throw new Error(`bad name: ${value.name}`);',
  '  for (let i = 0; i < items.length; i++) total += items[i]!.size;',
  '  return { ...defaults, ...overrides, path: join(root, "src", name) };',
  '}',
  '',
  '// TODO: handle the "\\r\\n" case and tabs\there',
  '    expect(result).toEqual({ ok: true, records: 3 });',
  'def load(path):\n    with open(path) as f:\n        return [json.loads(l) for l in f]',
  '  <div className="panel">{children}</div>',
  'SELECT id, name FROM sessions WHERE updated_at > $1 ORDER BY id;',
];

const SHELL_LINES = [
  '$ npm test',
  ' ✓ test/session/log-reader.test.ts (42 tests) 318ms',
  ' ✗ test/recovery/build-plan.test.ts > keeps the plan id stable',
  '   AssertionError: expected "rp_1f2e" to be "rp_9a0b"',
  'drwxr-xr-x  5 dev dev  4096 Jan  1 12:00 src',
  '-rw-r--r--  1 dev dev 12873 Jan  1 12:00 package-lock.json',
  "src/cli/main.ts:42:7 - error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
  'warning: in the working copy of "README.md", LF will be replaced by CRLF',
  '\u001b[32mPASS\u001b[39m  12 passed, 0 failed',
];

const TOOL_NAMES = ['read_file', 'list_directory', 'write_file', 'edit', 'run_shell_command'] as const;
const PATHS = ['src/cli/main.ts', 'src/session/log-reader.ts', 'README.md', 'test/recovery/build-plan.test.ts', 'package.json', 'docs/notes.md'];

export class Material {
  constructor(private readonly rng: Rng) {}

  prose(chars: number): string {
    const out: string[] = [];
    let n = 0;
    while (n < chars) {
      let sentence = '';
      const words = this.rng.int(6, 18);
      for (let i = 0; i < words; i++) sentence += (i === 0 ? '' : ' ') + this.rng.pick(WORDS);
      sentence = sentence.charAt(0).toUpperCase() + sentence.slice(1) + (this.rng.next() < 0.1 ? ':\n- ' : '. ');
      if (this.rng.next() < 0.08) sentence += '\n\n';
      out.push(sentence);
      n += sentence.length;
    }
    return out.join('').slice(0, chars);
  }

  lines(pool: readonly string[], chars: number): string {
    const out: string[] = [];
    let n = 0;
    let lineNo = 1;
    while (n < chars) {
      const l = this.rng.next() < 0.3 ? `${lineNo}\t${this.rng.pick(pool)}` : this.rng.pick(pool);
      out.push(l);
      n += l.length + 1;
      lineNo++;
    }
    return out.join('\n');
  }

  code(chars: number): string {
    return this.lines(CODE_LINES, chars);
  }

  shell(chars: number): string {
    return this.lines(SHELL_LINES, chars);
  }
}

// ---- sessions ------------------------------------------------------------------------------

const SESSION_CWD = '/home/dev/projects/webapp';
const MODEL = 'gpt-4.1-mini';

class SessionGen {
  readonly rng: Rng;
  readonly text: Material;
  readonly builder: RecordBuilder;
  private callNo = 0;
  private clock = Date.UTC(2026, 0, 5, 9, 0, 0);

  constructor(readonly spec: SessionSpec) {
    this.rng = new Rng(spec.seed);
    this.text = new Material(this.rng);
    const sessionId = this.rng.uuid();
    this.builder = new RecordBuilder(
      {
        sessionId,
        cwd: SESSION_CWD,
        version: '0.1.0',
        newId: () => this.rng.uuid(),
        now: () => new Date((this.clock += this.rng.int(200, 20_000))).toISOString(),
      },
      null,
    );
  }

  private get large(): boolean {
    return this.spec.profile === 'large';
  }

  userPrompt(): ChatRecord {
    const len = this.large ? this.rng.int(150, 3000) : this.rng.int(10, 80);
    const parts: Part[] = [{ text: this.text.prose(len) }];
    if (this.large && this.rng.next() < 0.2) parts.push({ text: '```ts\n' + this.text.code(this.rng.int(200, 2500)) + '\n```' });
    return this.builder.user(parts);
  }

  private callArgs(name: (typeof TOOL_NAMES)[number]): Record<string, unknown> {
    const path = this.rng.pick(PATHS);
    switch (name) {
      case 'read_file':
        return { path };
      case 'list_directory':
        return { path: path.split('/')[0] ?? '.' };
      case 'run_shell_command':
        return { command: this.rng.pick(['npm test', 'git status --short', 'ls -la', 'npx tsc --noEmit', 'grep -rn TODO src']) };
      case 'write_file':
        return { path, content: this.large ? this.text.code(this.rng.int(500, 12_000)) : this.text.prose(this.rng.int(10, 40)) };
      case 'edit':
        return {
          path,
          old_string: this.large ? this.text.code(this.rng.int(50, 800)) : this.text.prose(15),
          new_string: this.large ? this.text.code(this.rng.int(50, 800)) : this.text.prose(15),
        };
    }
  }

  /** An assistant record: [thought], [text], calls. */
  assistant(callCount: number, finalText: boolean): { record: ChatRecord; calls: Array<{ id: string; name: string }> } {
    const parts: Part[] = [];
    if (this.large && this.rng.next() < 0.5) parts.push({ text: this.text.prose(this.rng.int(100, 1500)), thought: true });
    const textLen = finalText ? (this.large ? this.rng.int(400, 6000) : this.rng.int(10, 60)) : this.large ? this.rng.int(60, 600) : this.rng.int(10, 30);
    if (finalText || this.rng.next() < 0.8) parts.push({ text: this.text.prose(textLen) });
    const calls: Array<{ id: string; name: string }> = [];
    for (let i = 0; i < callCount; i++) {
      const name = this.rng.pick(TOOL_NAMES);
      const id = `call_${(++this.callNo).toString(36)}`;
      calls.push({ id, name });
      parts.push({ functionCall: { id, name, args: this.callArgs(name) } });
    }
    const usage = { inputTokens: this.rng.int(1000, 120_000), outputTokens: this.rng.int(10, 4000) };
    return { record: this.builder.assistant(parts, MODEL, usage), calls };
  }

  toolResult(call: { id: string; name: string }): ChatRecord {
    let output: string;
    if (!this.large) output = this.text.prose(this.rng.int(10, 80));
    else if (call.name === 'read_file') output = this.text.code(this.rng.int(1000, 40_000));
    else if (call.name === 'run_shell_command') output = this.text.shell(this.rng.int(500, 30_000));
    else if (call.name === 'list_directory') output = this.text.shell(this.rng.int(300, 4000));
    else output = `Wrote ${this.rng.int(10, 900)} lines to ${this.rng.pick(PATHS)}.`;
    const failed = this.rng.next() < 0.05;
    const part = { functionResponse: { id: call.id, name: call.name, response: failed ? { error: output } : { output } } };
    const display = this.large && this.rng.next() < 0.3 ? output.slice(0, 200) : undefined;
    return this.builder.toolResult(part, failed ? 'error' : 'success', display !== undefined ? { display } : {});
  }
}

/** Yields records: whole turns until the budget is reached, then an interrupted turn. */
function* records(gen: SessionGen, done: (emitted: number) => boolean): Generator<ChatRecord> {
  let emitted = 0;
  const emit = (r: ChatRecord): ChatRecord => {
    gen.builder.advance(r);
    emitted++;
    return r;
  };
  const maxRecords = gen.spec.records;
  // Leave room for the interrupted tail (2 records) when the count is fixed.
  const room = (n: number): boolean => maxRecords === undefined || emitted + n + 2 <= maxRecords;
  while (!done(emitted) && room(1)) {
    yield emit(gen.userPrompt());
    const rounds = gen.rng.int(1, 5);
    for (let round = 0; round < rounds && room(1); round++) {
      const want = gen.spec.profile === 'large' ? gen.rng.int(1, 3) : gen.rng.next() < 0.85 ? 1 : 2;
      const callCount = maxRecords === undefined ? want : Math.max(0, Math.min(want, maxRecords - emitted - 3));
      const { record, calls } = gen.assistant(callCount, false);
      yield emit(record);
      for (const call of calls) yield emit(gen.toolResult(call));
    }
    if (room(1)) yield emit(gen.assistant(0, true).record);
  }
  // Fixed counts are padded with short exchanges (user, assistant) up to the tail.
  while (maxRecords !== undefined && emitted + 2 < maxRecords) yield emit(emitted % 2 === 0 ? gen.userPrompt() : gen.assistant(0, true).record);
  // The crash: two calls were made, one result was recorded.
  const { record, calls } = gen.assistant(2, false);
  yield emit(record);
  yield emit(gen.toolResult(calls[0]!));
}

function fileNameOf(spec: SessionSpec): string {
  const hash = createHash('sha256')
    .update(JSON.stringify({ v: GENERATOR_VERSION, spec }))
    .digest('hex')
    .slice(0, 10);
  return `${spec.label}-${hash}.jsonl`;
}

/** Validates the first records and a sample of the rest against ChatRecordSchema (every record is built by the same code). */
function shouldValidate(index: number): boolean {
  return index < 5000 || index % 37 === 0;
}

export function ensureSession(dir: string, spec: SessionSpec): GeneratedSession {
  mkdirSync(dir, { recursive: true });
  const name = fileNameOf(spec);
  const path = join(dir, name);
  // Files of this label generated with other parameters (or an older generator) are stale.
  for (const other of readdirSync(dir)) {
    if (other.startsWith(`${spec.label}-`) && !other.startsWith(name)) rmSync(join(dir, other), { force: true });
  }
  const metaPath = `${path}.meta.json`;
  if (existsSync(path) && existsSync(metaPath)) {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as { bytes: number; records: number };
    if (statSync(path).size === meta.bytes) return { spec, path, bytes: meta.bytes, records: meta.records, reused: true };
  }

  const gen = new SessionGen(spec);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  let bytes = 0;
  let count = 0;
  let batch: string[] = [];
  let batchChars = 0;
  const flush = (): void => {
    if (batch.length === 0) return;
    const buf = Buffer.from(batch.join(''), 'utf8');
    writeSync(fd, buf);
    bytes += buf.length;
    batch = [];
    batchChars = 0;
  };
  try {
    // Byte budget checks include the unflushed batch (chars ~ bytes for this material).
    const done = (emitted: number): boolean => (spec.targetBytes !== undefined ? bytes + batchChars >= spec.targetBytes : emitted >= (spec.records ?? 0));
    let previous: string | null = null;
    for (const record of records(gen, done)) {
      if (record.parentUuid !== previous) throw new Error(`generator bug: broken chain at record ${count}`);
      previous = record.uuid;
      if (shouldValidate(count)) {
        const check = ChatRecordSchema.safeParse(record);
        if (!check.success) throw new Error(`generator bug: record ${count} is invalid: ${check.error.message}`);
      }
      const line = `${JSON.stringify(record)}\n`;
      batch.push(line);
      batchChars += line.length;
      count++;
      if (batchChars > 4 << 20) flush();
    }
    flush();
  } finally {
    closeSync(fd);
  }
  if (spec.records !== undefined && count !== spec.records) throw new Error(`generator bug: ${count} records, wanted ${spec.records}`);
  renameSync(tmp, path);
  writeFileSync(metaPath, `${JSON.stringify({ spec, generatorVersion: GENERATOR_VERSION, bytes, records: count }, null, 2)}\n`);
  return { spec, path, bytes, records: count, reused: false };
}
