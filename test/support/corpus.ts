/**
 * The crash corpus: one directory per case under fixtures/crashes, each with a
 * session.jsonl and an expected.json. Every entrypoint's test reads it from here.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { SYNTHETIC_RESULT_REASON } from '../../src/recovery/synthetic-result.js';

export const CORPUS_DIR = resolve(import.meta.dirname, '../../fixtures/crashes');

export const ExpectedSchema = z.object({
  description: z.string().min(1),
  designRef: z.string().optional(),
  kind: z.enum(['clean', 'interrupted_prompt', 'interrupted_turn', 'degraded_history']),
  cause: z.enum(['none', 'crash', 'aborted', 'unknown', 'running', 'failed']),
  repairs: z.array(z.record(z.string(), z.unknown())),
  canContinue: z.boolean(),
  canAutoContinue: z.boolean(),
  requiresUserConfirmation: z.boolean(),
  canAutoContinueWithOptIn: z.boolean(),
  previousAttempts: z.number().int().nonnegative(),
  continuation: z.object({ mode: z.enum(['retry_user_parts', 'tool_result_parts']), parts: z.array(z.record(z.string(), z.unknown())) }).nullable(),
  noticeIncludes: z.array(z.string()),
  diagnostics: z.array(z.string()),
  apiEntries: z.number().int().nonnegative(),
  /** plan.sidechainRecords (checked when given; 0 otherwise). */
  sidechainRecords: z.number().int().nonnegative().optional(),
  /** plan.lastError (checked when given; null otherwise). */
  lastError: z.object({ code: z.string(), message: z.string() }).nullable().optional(),
});
export type Expected = z.infer<typeof ExpectedSchema>;

export interface CorpusCase {
  name: string;
  dir: string;
  /** Null when the directory has no expected.json: the table test fails such a case. */
  expected: Expected | null;
}

export function listCorpus(): CorpusCase[] {
  return readdirSync(CORPUS_DIR)
    .filter((name) => statSync(join(CORPUS_DIR, name)).isDirectory())
    .sort()
    .map((name) => {
      const dir = join(CORPUS_DIR, name);
      const file = join(dir, 'expected.json');
      const expected = existsSync(file) ? ExpectedSchema.parse(JSON.parse(readFileSync(file, 'utf8'))) : null;
      return { name, dir, expected };
    });
}

const copies: string[] = [];

/**
 * Copies a case's session into a fresh temp dir, so nothing can ever write to the fixture.
 * The copies are removed by removeCopies (a test file's `afterAll(removeCopies)`).
 */
export function copyCase(c: CorpusCase): { dir: string; sessionPath: string } {
  const dir = mkdtempSync(join(tmpdir(), `mend-corpus-${c.name}-`));
  copies.push(dir);
  cpSync(join(c.dir, 'session.jsonl'), join(dir, 'session.jsonl'));
  return { dir, sessionPath: join(dir, 'session.jsonl') };
}

/** Removes every copy copyCase made in this test file. */
export function removeCopies(): void {
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Replaces the `<synthetic>` placeholder of expected parts with the real reason text. */
export function expandSynthetic(parts: unknown): unknown {
  return JSON.parse(JSON.stringify(parts).replaceAll('"<synthetic>"', JSON.stringify(SYNTHETIC_RESULT_REASON)));
}
