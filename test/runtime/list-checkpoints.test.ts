/**
 * Session listings through plan checkpoints (src/runtime/list-sessions.ts): the rows equal
 * those of the listing that reads every session whole (SessionStore.list, then a plan each),
 * cold, warm (the checkpoint's kept plan: the log only stat'ed) and after an append; a page
 * is the same slice of the whole listing, with the same total; the text output of
 * `sessions list` shows rows as they come.
 */
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { settledCheckpointWrites } from '../../src/runtime/checkpoint/plan-checkpoints.js';
import { listSessionPage, listSessions, type ProjectSessionRow } from '../../src/runtime/list-sessions.js';
import { sessionLogPath } from '../../src/session/session-paths.js';
import { JsonlSessionStore } from '../../src/store/jsonl/jsonl-store.js';
import type { SessionStore } from '../../src/store/session-store.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'mend-list-checkpoints-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const project = join(root, 'project');
mkdirSync(project);
const scope = { projectRoot: project, cwd: project };
const notes: string[] = [];
const store = new JsonlSessionStore({ home, checkpoints: { note: (m) => notes.push(m), minBytes: 0 } });
/** The listing that reads every session whole: the same store without listLogs. */
const reference: SessionStore = Object.assign(Object.create(new JsonlSessionStore({ home })) as JsonlSessionStore, { listLogs: undefined });

function session(n: number, turns: number, ending: 'clean' | 'dangling' | 'prompt'): string {
  const id = `0000000${n}-1111-4222-8333-444444444444`;
  const lines: string[] = [];
  let parent: string | null = null;
  let t = Date.UTC(2026, 0, 1 + n);
  const push = (record: Record<string, unknown>): void => {
    const uuid = `${id.slice(0, 8)}-0000-4000-8000-${String(lines.length).padStart(12, '0')}`;
    lines.push(
      JSON.stringify({
        uuid,
        parentUuid: parent,
        sessionId: id,
        timestamp: new Date((t += 1000)).toISOString(),
        cwd: project,
        version: 'mend/0.1.0',
        ...record,
      }),
    );
    parent = uuid;
  };
  for (let i = 0; i < turns; i++) {
    push({ type: 'user', message: { role: 'user', parts: [{ text: `session ${n} turn ${i}` }] } });
    const callId = `call_${n}_${i}`;
    push({ type: 'assistant', message: { role: 'model', parts: [{ text: 'Reading.' }, { functionCall: { id: callId, name: 'read_file', args: { p: i } } }] } });
    if (i < turns - 1 || ending !== 'dangling') {
      push({ type: 'tool_result', message: { role: 'user', parts: [{ functionResponse: { id: callId, name: 'read_file', response: { output: 'x' } } }] } });
      if (i < turns - 1 || ending === 'clean') push({ type: 'assistant', message: { role: 'model', parts: [{ text: 'Done.' }] } });
    }
  }
  const path = sessionLogPath(home, project, id);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const byPath = (rows: ProjectSessionRow[]): ProjectSessionRow[] => [...rows].sort((a, b) => a.path.localeCompare(b.path));

describe('session listings through plan checkpoints', () => {
  it('give the rows of reading every session whole, cold, warm and after an append; pages are slices of the whole', async () => {
    const paths = [session(1, 30, 'clean'), session(2, 50, 'dangling'), session(3, 5, 'prompt'), session(4, 1, 'dangling'), session(5, 80, 'clean')];
    // A damaged log and a folder named like a session: listed with what is wrong.
    appendFileSync(paths[2]!, '{"torn');
    mkdirSync(sessionLogPath(home, project, '00000009-1111-4222-8333-444444444444'));
    // Past the racy window: what a later listing reads of an unchanged log is its times.
    await new Promise((resolve) => setTimeout(resolve, 2100));

    const expected = byPath(await listSessions(reference, scope));
    expect(expected.filter((r) => !r.error).map((r) => r.kind)).toEqual(['clean', 'interrupted_turn', 'interrupted_prompt', 'interrupted_turn', 'clean']);
    const cold = await listSessions(store, scope);
    await settledCheckpointWrites();
    expect(byPath(cold)).toEqual(expected);
    // Newest first.
    expect(cold.filter((r) => !r.error).map((r) => r.id.slice(0, 8))).toEqual(['00000005', '00000004', '00000003', '00000002', '00000001']);
    const warm = await listSessions(store, scope);
    expect(warm).toEqual(cold);

    // A page: the same rows as that slice of the whole listing, and the whole's total.
    const page = await listSessionPage(store, scope, undefined, { page: { start: 2, size: 2 } });
    expect(page).toEqual({ rows: warm.slice(2, 4), total: warm.length });

    // Appended to: the rows follow.
    appendFileSync(
      paths[1]!,
      `${JSON.stringify({ uuid: 'late-result', parentUuid: null, sessionId: '00000002-1111-4222-8333-444444444444', timestamp: '2026-02-01T00:00:00.000Z', cwd: project, version: 'mend/0.1.0', type: 'user', message: { role: 'user', parts: [{ text: 'still there?' }] } })}\n`,
    );
    const after = await listSessions(store, scope);
    await settledCheckpointWrites();
    expect(byPath(after)).toEqual(byPath(await listSessions(reference, scope)));
    expect(notes.filter((n) => n.includes('not used') && !n.includes('window chain'))).toEqual([]);
  });
});
