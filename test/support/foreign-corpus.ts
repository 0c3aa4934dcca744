/**
 * The foreign crash corpus: one directory per case under fixtures/foreign, each with
 * a session file in its owner's format (session.jsonl, or the `file` expected.json
 * names) and an expected.json: the crash corpus's fields plus the agent, its version
 * and the plan id every entrypoint must give.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { Sandbox } from './cli.js';
import { ExpectedSchema } from './corpus.js';

export const FOREIGN_CORPUS_DIR = resolve(import.meta.dirname, '../../fixtures/foreign');

export const ForeignExpectedSchema = ExpectedSchema.extend({
  agent: z.enum(['claude', 'codex', 'gemini']),
  agentVersion: z.string().nullable(),
  planId: z.string().regex(/^rp_[0-9a-f]{16}$/),
  /** The session file's name in the case directory (default session.jsonl). */
  file: z.string().optional(),
});
export type ForeignExpected = z.infer<typeof ForeignExpectedSchema>;

export interface ForeignCase {
  name: string;
  dir: string;
  file: string;
  expected: ForeignExpected;
}

/** Sessions the real CLIs left after a kill (fixtures/foreign-real): in the corpus as `real-<case>` once they have an expected.json. */
export const FOREIGN_REAL_DIR = resolve(import.meta.dirname, '../../fixtures/foreign-real');

function casesIn(root: string, prefix: string): ForeignCase[] {
  return readdirSync(root)
    .filter((name) => statSync(join(root, name)).isDirectory() && existsSync(join(root, name, 'expected.json')))
    .sort()
    .map((name) => {
      const dir = join(root, name);
      const expected = ForeignExpectedSchema.parse(JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')));
      return { name: `${prefix}${name}`, dir, file: expected.file ?? 'session.jsonl', expected };
    });
}

/** The corpus; `withReal`: the real CLIs' sessions too (so far through the readers and the core only). */
export function listForeignCorpus(withReal = false): ForeignCase[] {
  return [...casesIn(FOREIGN_CORPUS_DIR, ''), ...(withReal && existsSync(FOREIGN_REAL_DIR) ? casesIn(FOREIGN_REAL_DIR, 'real-') : [])];
}

const copies: string[] = [];

/** The case's session file copied into a fresh temp dir (nothing may write to a fixture). */
export function copyForeignCase(c: ForeignCase): { dir: string; sessionPath: string } {
  const dir = mkdtempSync(join(tmpdir(), `mend-foreign-${c.name}-`));
  copies.push(dir);
  cpSync(join(c.dir, c.file), join(dir, c.file));
  return { dir, sessionPath: join(dir, c.file) };
}

export function removeForeignCopies(): void {
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Puts a case's file where its agent keeps the sandbox project's sessions, under HOME (= sb.root). */
export function placeInHome(sb: Sandbox, name: string): string {
  const c = listForeignCorpus(true).find((x) => x.name === name)!;
  const source = join(c.dir, c.file);
  if (c.expected.agent === 'claude') {
    const folder = join(sb.root, '.claude', 'projects', sb.cwd.replace(/[^a-zA-Z0-9]/g, '-'));
    mkdirSync(folder, { recursive: true });
    const path = join(
      folder,
      `${
        JSON.parse(
          readFileSync(source, 'utf8')
            .split('\n')
            .find((l) => l.includes('"sessionId"'))!,
        ).sessionId as string
      }.jsonl`,
    );
    copyFileSync(source, path);
    return path;
  }
  if (c.expected.agent === 'codex') {
    const folder = join(sb.root, 'codex-home', 'sessions', '2026', '12', '02');
    mkdirSync(folder, { recursive: true });
    // Codex names the file by its session id (session_meta.id, its first line).
    const head = readFileSync(source, 'utf8');
    const id = (JSON.parse(head.slice(0, head.indexOf('\n'))) as { payload: { id: string } }).payload.id;
    const path = join(folder, `rollout-2026-12-02T09-00-00-${id}.jsonl`);
    // The rollout names its project by session_meta.cwd (its first line).
    const text = readFileSync(source, 'utf8');
    const cwd = (JSON.parse(text.slice(0, text.indexOf('\n'))) as { payload: { cwd: string } }).payload.cwd;
    writeFileSync(path, text.replaceAll(JSON.stringify(cwd), JSON.stringify(sb.cwd)));
    return path;
  }
  const gemini = join(sb.root, 'gemini-home', '.gemini');
  mkdirSync(join(gemini, 'tmp', 'project', 'chats'), { recursive: true });
  writeFileSync(join(gemini, 'projects.json'), JSON.stringify({ projects: { [sb.cwd]: 'project' } }));
  // Gemini CLI names the file by its session id's first eight characters.
  const id = /"sessionId"\s*:\s*"([^"]+)"/.exec(readFileSync(source, 'utf8'))![1]!;
  const path = join(gemini, 'tmp', 'project', 'chats', `session-2026-12-02T09-00-${name}-${id.slice(0, 8)}${c.file.endsWith('.json') ? '.json' : '.jsonl'}`);
  copyFileSync(source, path);
  return path;
}

/** The environment that points Codex's and Gemini CLI's homes into the sandbox (Claude's is HOME/.claude, HOME = sb.root). */
export function foreignHomeEnv(sb: Sandbox): Record<string, string> {
  return { CODEX_HOME: join(sb.root, 'codex-home'), GEMINI_CLI_HOME: join(sb.root, 'gemini-home') };
}
