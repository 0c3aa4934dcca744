/**
 * The foreign crash corpus: one directory per case under fixtures/foreign, each with
 * a session file in its owner's format (session.jsonl, or the `file` expected.json
 * names) and an expected.json: the crash corpus's fields plus the agent, its version
 * and the plan id every entrypoint must give.
 */
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

export function listForeignCorpus(): ForeignCase[] {
  return readdirSync(FOREIGN_CORPUS_DIR)
    .filter((name) => statSync(join(FOREIGN_CORPUS_DIR, name)).isDirectory())
    .sort()
    .map((name) => {
      const dir = join(FOREIGN_CORPUS_DIR, name);
      const expected = ForeignExpectedSchema.parse(JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')));
      return { name, dir, file: expected.file ?? 'session.jsonl', expected };
    });
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
  const c = listForeignCorpus().find((x) => x.name === name)!;
  const source = join(FOREIGN_CORPUS_DIR, name, c.file);
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
    // Codex names the file by its session id (session_meta.id).
    const id = /"session_meta","payload":\{"id":"([^"]+)"/.exec(readFileSync(source, 'utf8'))![1]!;
    const path = join(folder, `rollout-2026-12-02T09-00-00-${id}.jsonl`);
    // The rollout names its project by session_meta.cwd.
    writeFileSync(path, readFileSync(source, 'utf8').replaceAll('/home/dev/proj', sb.cwd));
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
