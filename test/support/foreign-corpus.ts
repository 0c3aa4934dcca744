/**
 * The foreign crash corpus: one directory per case under fixtures/foreign, each with
 * a session file in its owner's format (session.jsonl, or the `file` expected.json
 * names) and an expected.json: the crash corpus's fields plus the agent, its version
 * and the plan id every entrypoint must give.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
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
