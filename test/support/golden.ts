/**
 * The stream-json output of the whole crash corpus, normalized, as a regression
 * record: uuids, message ids, timings and the sandbox path are replaced by
 * placeholders, everything else must stay byte-equal. Three runs per case:
 * inspect, `--continue-interrupted` on the scripted model, and the control
 * protocol (initialize, get_recovery_plan, continue_last_turn).
 * MEND_UPDATE_GOLDEN=1 rewrites fixtures/golden/stream-json.json on purpose.
 */
import { mkdirSync, copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CorpusCase } from './corpus.js';
import { logPathOf, mend, writeScript, type Sandbox } from './cli.js';

export const GOLDEN_FILE = join(import.meta.dirname, '../../fixtures/golden/stream-json.json');

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIMING_KEYS = new Set(['duration_ms', 'duration_api_ms']);

function normalizeValue(value: unknown, sessionId: string, cwd: string): unknown {
  if (typeof value === 'string') {
    return value
      .split(cwd)
      .join('<cwd>')
      .replaceAll(UUID, (m) => (m.toLowerCase() === sessionId.toLowerCase() ? '<session>' : '<uuid>'));
  }
  if (Array.isArray(value)) return value.map((v) => normalizeValue(v, sessionId, cwd));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = TIMING_KEYS.has(k) ? 0 : normalizeValue(v, sessionId, cwd);
    return out;
  }
  return value;
}

export function normalizeStdout(stdout: string, sessionId: string, cwd: string): unknown[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => normalizeValue(JSON.parse(l), sessionId, cwd));
}

const control = (id: string, request: Record<string, unknown>) => JSON.stringify({ type: 'control_request', request_id: id, request });

export interface GoldenRuns {
  inspect: { exitCode: number | undefined; lines: unknown[] };
  continue: { exitCode: number | undefined; lines: unknown[] };
  control: { exitCode: number | undefined; lines: unknown[] };
}

function install(sb: Sandbox, c: CorpusCase): string {
  const src = join(c.dir, 'session.jsonl');
  const first = readFileSync(src, 'utf8').split('\n')[0];
  let id = '00000000-0000-4000-8000-000000000000';
  try {
    const parsed = JSON.parse(first ?? '') as { sessionId?: unknown };
    if (typeof parsed.sessionId === 'string' && UUID.test(parsed.sessionId)) id = parsed.sessionId;
    UUID.lastIndex = 0;
  } catch {
    // An empty or damaged first line: the case is installed under a fixed id.
  }
  mkdirSync(sb.chats, { recursive: true });
  copyFileSync(src, logPathOf(sb, id));
  return id;
}

/** Runs one case three times in fresh copies of its log under `makeSb()` sandboxes. */
export async function goldenRuns(c: CorpusCase, makeSb: () => Sandbox): Promise<GoldenRuns> {
  const script = Array.from({ length: 60 }, () => ({ text: 'Continued.' }));
  const run = async (args: (id: string, scriptPath: string) => string[], input?: string) => {
    const sb = makeSb();
    const id = install(sb, c);
    const scriptPath = writeScript(sb, script);
    const r = await mend(sb, args(id, scriptPath), input === undefined ? {} : { input });
    return { exitCode: r.exitCode, lines: normalizeStdout(r.stdout, id, sb.root) };
  };
  return {
    inspect: await run((id) => ['--resume', id, '-o', 'stream-json']),
    continue: await run((id, s) => ['--resume', id, '-o', 'stream-json', '--continue-interrupted', '--scripted-responses', s]),
    control: await run(
      (id, s) => ['--resume', id, '--input-format', 'stream-json', '-o', 'stream-json', '--scripted-responses', s],
      [control('c1', { subtype: 'initialize' }), control('c2', { subtype: 'get_recovery_plan' }), control('c3', { subtype: 'continue_last_turn' })].join('\n') +
        '\n',
    ),
  };
}
