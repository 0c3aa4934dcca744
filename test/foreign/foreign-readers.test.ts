/**
 * The foreign readers in-process: recognition from content alone, tolerance (unknown
 * rows counted, damaged lines reported, never a throw), the owner's ids kept, and the
 * store seam refusing a file in no known format.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readClaude } from '../../src/foreign/claude/read-claude.js';
import { readGemini } from '../../src/foreign/gemini/read-gemini.js';
import { detectForeign } from '../../src/foreign/registry.js';
import { classifyFile } from '../../src/store/foreign-sources.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { FOREIGN_CORPUS_DIR, listForeignCorpus } from '../support/foreign-corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'mend-foreign-readers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('recognising a format', () => {
  it('knows every corpus file by its content, whatever its name', () => {
    for (const c of listForeignCorpus()) {
      const bytes = readFileSync(join(c.dir, c.file));
      expect(detectForeign(bytes)?.agent, c.name).toBe(c.expected.agent);
    }
  });

  it("never takes mend's own logs for another agent's", () => {
    for (const name of ['dangling-single-call', 'qwen-interrupted-turn', 'sidechain-dangling-call', 'torn-tail', 'empty-session']) {
      expect(detectForeign(readFileSync(join(CORPUS_DIR, name, 'session.jsonl'))), name).toBeNull();
    }
  });

  it('refuses a file in no known format with unknown_session_format, and leaves mend logs to mend', async () => {
    const other = join(tmp, 'notes.jsonl');
    writeFileSync(other, '{"event":"click","x":1}\n{"event":"scroll"}\n');
    await expect(classifyFile(other)).rejects.toMatchObject({ code: 'unknown_session_format' });
    expect(await classifyFile(join(CORPUS_DIR, 'dangling-single-call', 'session.jsonl'))).toBeNull();
    expect(await classifyFile(join(FOREIGN_CORPUS_DIR, 'gemini-legacy-json', 'session.json'))).toBe('gemini');
  });
});

describe('Claude Code reader', () => {
  const bytes = readFileSync(join(FOREIGN_CORPUS_DIR, 'claude-killed-mid-tool', 'session.jsonl'));

  it("keeps Claude's uuids and tool_use ids, and merges one API message's rows into one record", () => {
    const s = readClaude(bytes);
    expect(s.sessionId).toBe('5b0c7a4e-0f43-4f6e-9b7d-1f2a3b4c5d01');
    expect(s.agentVersion).toBe('2.1.336');
    expect(s.cwd).toBe('/home/dev/proj');
    const model = s.records.filter((r) => r.type === 'assistant');
    expect(new Set(model.map((r) => r.uuid))).toEqual(new Set(['c1-a1']));
    const parts = model.flatMap((r) => (r.type === 'assistant' ? r.message.parts : []));
    expect(parts).toEqual([
      { text: 'The user wants the build run.', thought: true },
      { text: 'Running it now.' },
      { functionCall: { id: 'toolu_01Kill', name: 'Bash', args: { command: 'echo start; sleep 30; echo end', description: 'Run it' } } },
    ]);
    // The merged rows' sources are kept for a writer in Claude's format.
    expect(s.rowsBySource[s.records.findIndex((r) => r.uuid === 'c1-a1')]!.lines).toEqual([4, 5, 6]);
    expect(s.rowTypes).toMatchObject({ 'queue-operation': 1, 'file-history-snapshot': 1, user: 1, assistant: 3 });
  });

  it('counts an unknown row type and reads on; a garbage line is reported, not thrown', () => {
    const text = `${bytes.toString('utf8')}{"type":"hologram","uuid":"h1","parentUuid":"c1-a3","sessionId":"5b0c7a4e-0f43-4f6e-9b7d-1f2a3b4c5d01"}\nnot json\n{"type":"hologram"}\n`;
    const s = readClaude(Buffer.from(text));
    expect(s.diagnostics).toEqual([
      { code: 'malformed_line', line: 8 },
      { code: 'unknown_row_type', line: 7, rowType: 'hologram', count: 2 },
    ]);
    // The unknown row with a uuid stays on the chain (a child naming it is no gap), as a system record.
    expect(s.records.at(-1)).toMatchObject({ uuid: 'h1', parentUuid: 'c1-a1', type: 'system', subtype: 'foreign_row' });
  });

  it('reads the isMeta "Continue from where you left off." as a recovery attempt and the <synthetic> answer as meta', () => {
    const s = readClaude(readFileSync(join(FOREIGN_CORPUS_DIR, 'claude-continue-artefacts', 'session.jsonl')));
    expect(s.records.map((r) => [r.uuid, r.type, r.type === 'system' ? r.subtype : ''])).toEqual([
      ['c9-u1', 'user', ''],
      ['c9-a1', 'assistant', ''],
      ['c9-m1', 'system', 'recovery'],
      ['c9-a2', 'system', 'foreign_meta'],
      ['c9-u2', 'user', ''],
    ]);
  });
});

describe('Gemini CLI reader', () => {
  it('replays upserts: the last copy wins, in the first copy’s place', () => {
    const s = readGemini(readFileSync(join(FOREIGN_CORPUS_DIR, 'gemini-upserts', 'session.jsonl')));
    expect(s.records.map((r) => r.uuid)).toEqual(['g1-u1', 'g1-m1', 'g1-m1_response', 'g1-m2']);
    const last = s.records.at(-1)!;
    expect(last.type === 'assistant' && last.message.parts).toEqual([{ text: 'There is one file: a.txt.' }]);
    expect(s.rowTypes).toMatchObject({ metadata: 1, $set: 1, user: 1, gemini: 4 });
  });

  it('drops the rewound message and everything after it', () => {
    const s = readGemini(readFileSync(join(FOREIGN_CORPUS_DIR, 'gemini-rewind', 'session.jsonl')));
    expect(s.records.map((r) => r.uuid)).toEqual(['g3-u1', 'g3-m1', 'g3-u3', 'g3-m3']);
    expect(s.records.map((r) => r.parentUuid)).toEqual([null, 'g3-u1', 'g3-m1', 'g3-u3']);
  });
});
